"""``python -m kafkaemu`` and the ``kafkaemu`` command (its console script runs ``run``)."""
import gc
import sys


def run() -> int:
    """``cli.main`` with the cyclic garbage collector off until the broker listens: what a start
    makes (modules, classes, the configuration, the internal topics) lives as long as the process,
    so collecting during the start is wasted work (about 40 collections). ``cli.serve`` freezes
    those objects once listening (``gc.freeze``: into the permanent generation, which no later
    collection walks; the ``gc`` module documents the same disable-then-freeze sequence for a
    process about to fork) and turns collection back on."""
    gc.disable()
    from .cli import main
    return main()


if __name__ == "__main__":
    sys.exit(run())
