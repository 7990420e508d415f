"""The pytest fixtures of the schema registry: the session emulator and its reset-before-each-test view."""

def test_clean(clean_kafka_emulator_with_schema_registry):
    import json, urllib.request
    url = clean_kafka_emulator_with_schema_registry.get_schema_registry_url()
    req = urllib.request.Request(url + "/subjects/x/versions", data=b'{"schema": "\\"int\\""}', method="POST",
                                 headers={"Content-Type": "application/json"})
    assert json.loads(urllib.request.urlopen(req).read()) == {"id": 1}

def test_clean_again(clean_kafka_emulator_with_schema_registry):
    import json, urllib.request
    url = clean_kafka_emulator_with_schema_registry.get_schema_registry_url()
    assert json.loads(urllib.request.urlopen(url + "/subjects").read()) == []
