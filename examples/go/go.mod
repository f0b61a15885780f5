module github.com/solgate/solgate/examples/go

go 1.26.0

require (
	connectrpc.com/connect v1.21.1
	github.com/mr-tron/base58 v1.3.0
	github.com/solgate/solgate/clients/go v1.0.0
	google.golang.org/protobuf v1.36.12
)

require (
	buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go v1.36.12-20260825204119-511051f7f437.2 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/grpc v1.85.0 // indirect
)

// In your own module, drop this line: `go get github.com/solgate/solgate/clients/go` fetches it.
replace github.com/solgate/solgate/clients/go => ../../clients/go
