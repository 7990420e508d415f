"""integration/java/fetch_jars.py: Maven is asked once per pom, and its absence is named."""
import sys
from pathlib import Path

import pytest

JAVA_DIR = Path(__file__).resolve().parents[1] / "integration" / "java"


@pytest.fixture
def fetch_jars():
    sys.path.insert(0, str(JAVA_DIR))
    try:
        import fetch_jars
        yield fetch_jars
    finally:
        sys.path.remove(str(JAVA_DIR))


@pytest.fixture
def pom(tmp_path):
    pom = tmp_path / "pom.xml"
    pom.write_text("<project/>")
    return pom


def test_without_maven_it_names_what_is_missing(fetch_jars, pom, tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_jars.shutil, "which", lambda tool: None if tool == "mvn" else f"/usr/bin/{tool}")
    with pytest.raises(fetch_jars.Unavailable, match="mvn not on PATH"):
        fetch_jars.copy_dependencies(pom, tmp_path / "out")


def test_a_folder_filled_from_the_same_pom_is_not_fetched_again(fetch_jars, pom, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a-1.jar").write_bytes(b"jar")
    (out / fetch_jars.STAMP).write_text(fetch_jars._stamp_text(pom, {"v": "1"}))
    monkeypatch.setattr(fetch_jars.subprocess, "run", lambda *a, **k: pytest.fail("Maven was run again"))
    assert fetch_jars.copy_dependencies(pom, out, {"v": "1"}) == [out / "a-1.jar"]


def test_a_changed_version_empties_the_folder_and_maven_fills_it_anew(fetch_jars, tmp_path):
    """With the real mvn, on a pom with no dependencies: the jar of the older fill does not stay."""
    if fetch_jars.shutil.which("mvn") is None or fetch_jars.shutil.which("java") is None:
        pytest.skip("needs mvn and java")
    pom = tmp_path / "pom.xml"
    pom.write_text("<project><modelVersion>4.0.0</modelVersion><groupId>t</groupId><artifactId>t</artifactId>"
                   "<version>1</version><packaging>pom</packaging></project>")
    out = tmp_path / "out"
    out.mkdir()
    (out / "kafka-clients-4.3.0.jar").write_bytes(b"old")
    (out / fetch_jars.STAMP).write_text(fetch_jars._stamp_text(pom, {"v": "1"}))
    assert fetch_jars.copy_dependencies(pom, out, {"v": "2"}) == []
    assert not (out / "kafka-clients-4.3.0.jar").exists()
    assert (out / fetch_jars.STAMP).read_text() == fetch_jars._stamp_text(pom, {"v": "2"})
