from .emulator import KafkaEmulator

__all__ = ["KafkaEmulator"]
