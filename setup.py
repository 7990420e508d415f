"""setuptools needs code for one thing setup.cfg cannot say: ``protocol_specs/`` stays at the top of
the checkout but ships inside the package, as ``kafkaemu/protocol_specs`` (read by
``kafkaemu.protocol.catalog.spec_dir``). The web page's files (``kafkaemu/control/ui``) are package
data too."""
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["kafkaemu", "kafkaemu.*"]) + ["kafkaemu.protocol_specs"],
    package_dir={"kafkaemu.protocol_specs": "protocol_specs"},
    package_data={"kafkaemu.protocol_specs": ["**/*.spec"], "kafkaemu.control": ["ui/*"]},
)
