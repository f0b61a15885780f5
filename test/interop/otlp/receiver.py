"""
A minimal OTLP/HTTP traces receiver for the interop test: decodes each POST /v1/traces body with the
official protobuf definitions (PyPI `opentelemetry-proto`), answers an empty ExportTraceServiceResponse,
and prints one JSON line per span on stdout. Prints `listening <port>` first (it binds port 0).
Written here because the OpenTelemetry Collector is not in this machine's package registries as a
binary, and building it from the Go proxy takes far too long on 2 cores.
"""
import gzip
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind is not None else None


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.read_body()
        if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(415 if self.path == "/v1/traces" else 404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    line = {
                        "traceId": span.trace_id.hex(),
                        "spanId": span.span_id.hex(),
                        "parentSpanId": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "status": {"code": span.status.code, "message": span.status.message},
                        "attributes": {a.key: value_of(a.value) for a in span.attributes},
                        "resource": resource,
                        "scope": scope_spans.scope.name,
                    }
                    sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        payload = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def read_body(self):
        # Node's exporter streams its request: chunked transfer encoding, no content-length.
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.headers.get("content-encoding", "").lower() == "gzip":
            body = gzip.decompress(body)
        return body

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
sys.stdout.write(f"listening {server.server_address[1]}\n")
sys.stdout.flush()
server.serve_forever()
