"""``kafkaemu serve`` keeps large buffers' memory between requests on glibc (kafkaemu/allocator.py)."""
import platform
import subprocess
import sys


def test_thresholds_are_set_on_glibc_and_left_alone_elsewhere():
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    # in a child process: the setting is process-wide
    code = "from kafkaemu.allocator import keep_large_buffers; print(keep_large_buffers())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(glibc)

