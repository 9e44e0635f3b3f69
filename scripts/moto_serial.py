"""Runs moto server handling one request at a time.

moto applies a DynamoDB TransactWriteItems item by item and, when a
condition fails, restores a copy of the whole table taken when it started,
undoing any transaction another thread committed meanwhile. Real DynamoDB
serialises transactions; serving requests one at a time gives the tests the
same guarantee, so concurrency tests measure our code, not the emulator.

usage: python scripts/moto_serial.py HOST PORT
"""

import sys

from werkzeug.serving import run_simple

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(host, port, app, threaded=False, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
