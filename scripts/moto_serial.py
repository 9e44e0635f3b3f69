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


class OneAtATimeHandler(MotoRequestHandler):
    # An HTTP client may dial a spare connection and leave it unused in its
    # pool. Waiting on it would stall this one-request-at-a-time server
    # while the client's real request queues on another connection, so a
    # connection silent this long is dropped.
    timeout = 2


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(host, port, app, threaded=False, request_handler=OneAtATimeHandler)


if __name__ == "__main__":
    main()
