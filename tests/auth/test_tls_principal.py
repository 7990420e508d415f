"""Principals from TLS client certificates: the RFC 2253 subject and Kafka's SslPrincipalMapper rules
(cases from Kafka's SslPrincipalMapperTest)."""
import pytest

from kafkaemu.auth.principal import ANONYMOUS, PrincipalMapper, distinguished_name, tls_principal


@pytest.mark.parametrize("rules", [
    "DEFAULT",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
    "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
    "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
    "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
    "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
])
def test_valid_rules(rules):
    PrincipalMapper(rules)


@pytest.mark.parametrize("rules", ["DEFAULT, DEFAUL", "DEFAUL", "DEFAULT/L", "DEFAULT/U",
                                   "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
                                   "RULE:^CN=(.*?),OU=ServiceUsers.*$/L", "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
                                   "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU"])
def test_invalid_rules(rules):
    with pytest.raises(ValueError):
        PrincipalMapper(rules)


def test_the_first_matching_rule_maps_the_name():
    mapper = PrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),"
                             "ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,DEFAULT")
    assert mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US") == "Duke"
    assert mapper.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme"
    assert mapper.name("CN=Duke,OU=JavaSoft,O=Sun Microsystems") == "DUKE"
    assert mapper.name("OU=JavaSoft,O=Sun Microsystems,C=US") == "OU=JavaSoft,O=Sun Microsystems,C=US"
    with pytest.raises(ValueError):
        PrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/").name("CN=x,OU=Other")


def test_the_subject_is_written_as_java_writes_it():
    cert = {"subject": ((("countryName", "US"),), (("organizationName", "Example, Inc."),),
                        (("organizationalUnitName", "eng"),), (("commonName", "alice"),))}
    assert distinguished_name(cert) == "CN=alice,OU=eng,O=Example\\, Inc.,C=US"

    class Ssl:
        def __init__(self, cert):
            self.cert = cert

        def getpeercert(self):
            return self.cert

    assert tls_principal(Ssl(cert), PrincipalMapper("RULE:^CN=([^,]*),.*$/$1/")) == "User:alice"
    assert tls_principal(Ssl({}), PrincipalMapper()) == ANONYMOUS
    assert tls_principal(None, PrincipalMapper()) == ANONYMOUS
