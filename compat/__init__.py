"""`make compat`: other projects' own test suites run unmodified against kafkaemu (docs/compat.md)."""
