// Package solgate connects Go programs to a Solgate gateway.
//
// The generated code is in the subpackages: solgate/v1 (package solgatev1: the messages and the
// grpc-go stubs) and solgate/v1/solgatev1connect (connect-go stubs). New is a small convenience over
// the connect-go ones: one client per service, the API key sent as `Authorization: Bearer`, over
// gRPC, gRPC-Web or Connect. With grpc-go instead, dial with grpc.NewClient and use
// solgatev1.NewFeeServiceClient(conn) and the like.
package solgate

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/solgate/solgate/clients/go/solgate/v1/solgatev1connect"
)

// Protocol is the wire protocol the clients speak; the gateway answers all three on one port.
type Protocol string

const (
	// ProtocolGRPC is gRPC over HTTP/2 (h2c for http:// URLs).
	ProtocolGRPC Protocol = "grpc"
	// ProtocolGRPCWeb is gRPC-Web.
	ProtocolGRPCWeb Protocol = "grpcweb"
	// ProtocolConnect is the Connect protocol (binary Protobuf).
	ProtocolConnect Protocol = "connect"
)

// Options are New's optional settings; the zero value means gRPC over the default HTTP/2 client.
type Options struct {
	Protocol Protocol
	// HTTPClient replaces the default, which speaks HTTP/2 to https:// URLs and h2c to http:// ones.
	HTTPClient *http.Client
	// ClientOptions are added after the protocol and the API-key interceptor.
	ClientOptions []connect.ClientOption
}

// Clients holds one connect-go client per service of package solgate.v1.
type Clients struct {
	Collection  solgatev1connect.CollectionServiceClient
	Fee         solgatev1connect.FeeServiceClient
	Transaction solgatev1connect.TransactionServiceClient
	Program     solgatev1connect.ProgramServiceClient
	Account     solgatev1connect.AccountServiceClient
	Wallet      solgatev1connect.WalletServiceClient
	Token       solgatev1connect.TokenServiceClient
}

// New returns clients for the gateway at baseURL (e.g. "http://127.0.0.1:8080") that send apiKey
// with every call.
func New(baseURL, apiKey string, options Options) (*Clients, error) {
	opts := []connect.ClientOption{connect.WithInterceptors(bearer(apiKey))}
	switch options.Protocol {
	case ProtocolGRPC, "":
		opts = append(opts, connect.WithGRPC())
	case ProtocolGRPCWeb:
		opts = append(opts, connect.WithGRPCWeb())
	case ProtocolConnect:
		// connect-go's default: the Connect protocol with binary Protobuf.
	default:
		return nil, errors.New("solgate: unknown protocol " + string(options.Protocol))
	}
	opts = append(opts, options.ClientOptions...)
	client := options.HTTPClient
	if client == nil {
		client = http2Client()
	}
	return &Clients{
		Collection:  solgatev1connect.NewCollectionServiceClient(client, baseURL, opts...),
		Fee:         solgatev1connect.NewFeeServiceClient(client, baseURL, opts...),
		Transaction: solgatev1connect.NewTransactionServiceClient(client, baseURL, opts...),
		Program:     solgatev1connect.NewProgramServiceClient(client, baseURL, opts...),
		Account:     solgatev1connect.NewAccountServiceClient(client, baseURL, opts...),
		Wallet:      solgatev1connect.NewWalletServiceClient(client, baseURL, opts...),
		Token:       solgatev1connect.NewTokenServiceClient(client, baseURL, opts...),
	}, nil
}

// ErrorReason returns the reason of the error's google.rpc.ErrorInfo detail (the gateway's error
// catalogue: "INVALID_ADDRESS", "BLOCKHASH_EXPIRED", ...), or "" when it has none.
func ErrorReason(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, detail := range ce.Details() {
		value, decodeErr := detail.Value()
		if info, ok := value.(*errdetails.ErrorInfo); ok && decodeErr == nil {
			return info.GetReason()
		}
	}
	return ""
}

// http2Client speaks HTTP/2 only: with TLS for https:// URLs, in clear text (h2c) for http:// ones,
// as gRPC needs; gRPC-Web and Connect work over it too.
func http2Client() *http.Client {
	protocols := new(http.Protocols)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: protocols, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}
}

// bearer adds `Authorization: Bearer <key>` to every request, unary and streaming.
type bearer string

func (k bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(k))
		return next(ctx, req)
	}
}

func (k bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(k))
		return conn
	}
}

func (k bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
