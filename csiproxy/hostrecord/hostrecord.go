// Package hostrecord lets a simulated host report, with each answer, the
// Windows calls it made for the request (hostmodel.Host.Commands): the
// names of the calls travel in a gRPC trailer. The conformance suite reads
// it to tell a refusal by validation (no Windows call) from a Windows call
// that failed (the host let the request through). The simulated host and
// the reference lane report; a real csi-proxy does not, and the suite then
// counts any error as a refusal. Only call names travel, never arguments.
//
// The calls of one request are those made while it was handled: the suite
// sends one request at a time.
package hostrecord

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
)

// Trailer is the trailer key that carries the calls.
const Trailer = "fenceproof-windows-calls"

// Interceptor reports, in the Trailer of every answer, the Windows calls
// h recorded while the request was handled ("" when none).
func Interceptor(h *hostmodel.Host) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		before := h.CommandCount()
		resp, err := handler(ctx, req)
		names := []string{""}
		if calls := h.Commands(before); len(calls) > 0 {
			names = names[:0]
			for _, c := range calls {
				names = append(names, Name(c))
			}
		}
		_ = grpc.SetTrailer(ctx, metadata.Pairs(Trailer, strings.Join(names, ",")))
		return resp, err
	}
}

// Name names a call for a report: the cmdlet a script starts with, or the
// call's name.
func Name(c hostmodel.Command) string {
	if c.Op != "powershell" {
		return c.Op
	}
	name, _, _ := strings.Cut(strings.TrimLeft(c.Script, "($ "), " ")
	return name
}

// Calls is what a host reported for one request.
type Calls struct {
	// Reported: the host reports its calls.
	Reported bool
	// Names are the calls made, in order.
	Names []string
}

type callsKey struct{}

// Watch returns a context whose requests' reports land in the returned
// Calls (through ClientInterceptor).
func Watch(ctx context.Context) (context.Context, *Calls) {
	c := &Calls{}
	return context.WithValue(ctx, callsKey{}, c), c
}

// ClientInterceptor captures the report of a request sent with a Watch
// context.
func ClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		c, _ := ctx.Value(callsKey{}).(*Calls)
		if c == nil {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		var md metadata.MD
		err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Trailer(&md))...)
		if v := md.Get(Trailer); len(v) > 0 {
			c.Reported = true
			if v[0] != "" {
				c.Names = append(c.Names, strings.Split(v[0], ",")...)
			}
		}
		return err
	}
}
