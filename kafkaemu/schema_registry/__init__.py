"""A Confluent Schema Registry built into kafkaemu (docs/schema-registry.md): the REST API
(``http``), served on its own port (``service``), over a ``_schemas`` topic of the broker's log
store (``records``, ``state``), with Avro, JSON Schema and Protobuf (``*_format``) at Confluent's
seven compatibility levels (``compatibility``)."""
