"""Client quotas (KIP-13, KIP-55, KIP-124, KIP-546): the quota entities and their values
(``entities.py``), Kafka's sampled rate and throttle time (``rate.py``) and the per-client
sensors that turn a request's bytes or time into a throttle (``manager.py``). Pure: time is passed in."""
