#!/usr/bin/env python3
"""A stand-in kubelet for gpuenv export's pod attribution (tests/export_pods_test.cc).

Serves the real v1.PodResourcesLister/List (src/sense/kubelet/pod_resources.proto,
its Python messages made by protoc --python_out at build time) on a unix socket,
answering with the pods of a JSON file read again on every call, so a test can
change the assignments while the exporter runs:

    [{"name": "train-0", "namespace": "ml",
      "containers": [{"name": "trainer",
                      "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["GPU-..."]}]}]}]

The answer is serialized as it stands, except that each "<invalid-utf8>" in it
becomes as many 0xFF bytes (a name that is not UTF-8, which protoc's Python
messages would refuse to hold).

--mode fail answers every List with an error whose text changes each time ("kubelet
failure 1", "kubelet failure 2", ...). --mode hang listens on the socket and accepts
connections but never answers (a kubelet that hangs). Prints "ready" once it listens and
"list N" as it takes the Nth List (serve and fail); runs until SIGTERM.
"""
import argparse
import json
import signal
import socket
import sys
import threading
from concurrent import futures


def serve(args):
    sys.path.insert(0, args.pb2_dir)
    import grpc
    from google.protobuf import json_format
    import pod_resources_pb2 as pb2

    calls = [0]

    def list_pods(request, context):
        calls[0] += 1
        print(f"list {calls[0]}", flush=True)
        if args.mode == "fail":
            context.abort(grpc.StatusCode.UNKNOWN, f"kubelet failure {calls[0]}")
        with open(args.pods) as f:
            pods = json.load(f)
        return json_format.ParseDict({"pod_resources": pods}, pb2.ListPodResourcesResponse())

    def serialize(response):
        marker = b"<invalid-utf8>"
        return response.SerializeToString().replace(marker, b"\xff" * len(marker))

    handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
        "List": grpc.unary_unary_rpc_method_handler(
            list_pods,
            request_deserializer=pb2.ListPodResourcesRequest.FromString,
            response_serializer=serialize),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    if server.add_insecure_port("unix:" + args.socket) == 0:
        sys.exit("stand_in_kubelet: cannot listen on " + args.socket)
    server.start()
    return server.stop


def hang(args):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(args.socket)
    listener.listen(16)
    held = []

    def accept():
        while True:
            conn, _ = listener.accept()
            held.append(conn)  # read nothing, answer nothing

    threading.Thread(target=accept, daemon=True).start()
    return lambda grace: listener.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--pods", help="the JSON file of pods (serve mode)")
    ap.add_argument("--pb2-dir", help="where pod_resources_pb2.py is (serve mode)")
    ap.add_argument("--mode", choices=["serve", "fail", "hang"], default="serve")
    args = ap.parse_args()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    stop = hang(args) if args.mode == "hang" else serve(args)
    print("ready", flush=True)
    done.wait()
    stop(0)


if __name__ == "__main__":
    main()
