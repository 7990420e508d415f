"""SASL authentication (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), sans-IO.

``mechanisms`` holds the server side of each mechanism, ``credentials`` the users,
``authenticator`` the per-connection state machine that runs before any other request."""
