"""The PodResources v1 messages: api.proto and the modules protoc generates from it.

Generated code (api_pb2.py, api_pb2.pyi): never edit it; change api.proto and run
``python tools/generate_podresources.py``. Imported only by dra_metadata.podresources, when a
call is made (it loads protobuf).
"""
