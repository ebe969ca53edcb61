"""A user's project with llm-core installed: its own test set-up and a test of its own service."""

#: The project's conftest: a resolver that knows the user's own service (on loopback) and
#: a model provider (an address of TEST-NET-3, which nothing answers: the guard must refuse
#: before connecting), installed at import, as a user's own test set-up might.
RESOLVER = """
import socket

NAMES = {"my-service.internal": "127.0.0.1", "api.acme.example": "203.0.113.7"}
_real = socket.getaddrinfo


def fake_getaddrinfo(host, port, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    if name in NAMES:
        return _real(NAMES[name], port, *args, **kwargs)
    if name in ("localhost", "127.0.0.1", "::1", None):
        return _real(host, port, *args, **kwargs)
    raise socket.gaierror(socket.EAI_NONAME, f"the test resolver does not know {name}")


socket.getaddrinfo = fake_getaddrinfo
"""

#: A user's own test: it resolves its service's host name and talks to it on loopback.
USERS_OWN_SOCKETS = """
import socket
import threading


def test_my_service_answers():
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def echo():
        conn, _ = server.accept()
        with conn:
            conn.sendall(conn.recv(16).upper())

    [(_, _, _, _, address)] = socket.getaddrinfo("my-service.internal", port, socket.AF_INET, socket.SOCK_STREAM)
    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    with socket.create_connection(address, timeout=5) as client:
        client.sendall(b"ping")
        assert client.recv(16) == b"PING"
    thread.join(5)
    server.close()
"""
