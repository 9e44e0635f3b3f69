"""Cold starts of a Lambda function binary, against a local Lambda Runtime API.

Each run starts BOOTSTRAP with AWS_LAMBDA_RUNTIME_API pointing at a server
in this process that hands it one API Gateway (HTTP API v2) event, and times
  init      exec -> the runtime's first GET /invocation/next (configuration
            loaded, store client ready, content bundle fetched and validated);
  response  exec -> the POST /invocation/<id>/response of that event (init,
            then the first invocation, which also builds the app);
and reads the process's peak RSS (VmHWM) once it has answered. Lambda's own overhead (sandbox, code
download) is not in these figures; the function's configuration comes from
the environment (scripts/measure-lambda.sh sets it up against moto).

Usage: lambda_cold_start.py BOOTSTRAP [--runs N] [--function NAME]
Prints one JSON line: medians and worst run.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NEXT = "/2018-06-01/runtime/invocation/next"


def create_thread_event():
    """POST /threads as the HTTP API delivers it, with verified JWT claims."""
    now = time.time()
    body = json.dumps({"courseId": "prealgebra", "mode": "guided"})
    return {
        "version": "2.0",
        "routeKey": "POST /threads",
        "rawPath": "/threads",
        "rawQueryString": "",
        "headers": {
            "content-type": "application/json",
            "idempotency-key": str(uuid.uuid4()),
            "host": "api.example.org",
        },
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.org",
            "domainPrefix": "api",
            "http": {
                "method": "POST",
                "path": "/threads",
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "measure",
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "POST /threads",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
            "authorizer": {"jwt": {"claims": {"sub": "measure-student"}, "scopes": None}},
        },
        "body": body,
        "isBase64Encoded": False,
    }


class Run:
    """What one cold start reported to the runtime API."""

    def __init__(self):
        self.event = json.dumps(create_thread_event()).encode()
        self.request_id = str(uuid.uuid4())
        self.next_at = None
        self.response_at = None
        self.response = None
        self.done = threading.Event()


def serve(run):
    """A Runtime API for one run only, so a killed runtime's late request
    can never be taken for the next run's."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path != NEXT or run.next_at is not None:
                # A second /next: the run is over. Hold the runtime here
                # until it is killed; the connection just closes.
                run.done.wait(30)
                self.close_connection = True
                return
            run.next_at = time.perf_counter()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Lambda-Runtime-Aws-Request-Id", run.request_id)
            self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 28000))
            self.send_header(
                "Lambda-Runtime-Invoked-Function-Arn",
                "arn:aws:lambda:us-east-1:123456789012:function:measure",
            )
            self.send_header("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
            self.send_header("Content-Length", str(len(run.event)))
            self.end_headers()
            self.wfile.write(run.event)

        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            body = self.rfile.read(length)
            run.response_at = time.perf_counter()
            run.response = (self.path.rsplit("/", 1)[-1], body)
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            run.done.set()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def peak_rss_mb(pid):
    """VmHWM of a live process: its peak resident set so far."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise SystemExit(f"no VmHWM for process {pid}")


def one_run(bootstrap, function):
    run = Run()
    server = serve(run)
    port = server.server_address[1]
    env = dict(os.environ)
    env.update(
        {
            "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{port}",
            "AWS_LAMBDA_FUNCTION_NAME": function,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
            "AWS_LAMBDA_LOG_FORMAT": "JSON",
        }
    )
    started = time.perf_counter()
    process = subprocess.Popen([bootstrap], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    finished = run.done.wait(60)
    # Still alive: after its response the runtime waits for the next event.
    peak = peak_rss_mb(process.pid) if process.poll() is None else None
    process.send_signal(signal.SIGKILL)
    process.wait()
    server.shutdown()
    server.server_close()
    stderr = process.stderr.read().decode(errors="replace")
    if not finished or run.next_at is None or peak is None:
        raise SystemExit(f"no response from {bootstrap}:\n{stderr[-3000:]}")
    kind, body = run.response
    if kind != "response" or b'"statusCode":201' not in body.replace(b" ", b""):
        raise SystemExit(f"{bootstrap} answered {kind}: {body[:500]!r}\n{stderr[-3000:]}")
    return {
        "init_ms": (run.next_at - started) * 1000,
        "response_ms": (run.response_at - started) * 1000,
        "peak_rss_mb": peak,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bootstrap")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--function", default="turn")
    args = parser.parse_args()
    # One run first, not counted: it creates the table in the emulator.
    one_run(args.bootstrap, args.function)
    runs = [one_run(args.bootstrap, args.function) for _ in range(args.runs)]
    summary = {"bootstrap": args.bootstrap, "runs": args.runs}
    for key in ("init_ms", "response_ms", "peak_rss_mb"):
        values = [r[key] for r in runs]
        summary[f"median_{key}"] = round(statistics.median(values), 1)
        summary[f"max_{key}"] = round(max(values), 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
