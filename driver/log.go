package driver

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// maxLoggedCIDRs bounds the cidrs logged per RPC; cidr_count has the total.
const maxLoggedCIDRs = 16

// logInterceptor logs one structured line per RPC: rpc, cidrs, the names
// (never the values) of the secrets carried, code and duration.
func (d *Driver) logInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	st := status.Convert(err)
	attrs := []any{"rpc", path.Base(info.FullMethod), "code", st.Code().String(), "duration", time.Since(start)}
	if c := st.Code(); c == codes.Unauthenticated || c == codes.PermissionDenied {
		// Nothing of an unauthenticated request but its size.
		if m, ok := req.(proto.Message); ok {
			attrs = append(attrs, "request_bytes", proto.Size(m))
		}
		d.log.Warn("rpc failed", append(attrs, "error", d.loggedError(st.Message()))...)
		return resp, err
	}
	if r, ok := req.(interface{ GetCidrs() []*fence.CIDR }); ok {
		all := r.GetCidrs()
		cidrs := make([]string, 0, min(len(all), maxLoggedCIDRs))
		for _, c := range all[:min(len(all), maxLoggedCIDRs)] {
			cidrs = append(cidrs, clip(c.GetCidr()))
		}
		attrs = append(attrs, "cidrs", cidrs, "cidr_count", len(all))
	}
	if r, ok := req.(request); ok {
		attrs = append(attrs, "secret_keys", boundedKeys(r.GetSecrets()))
	}
	if err != nil {
		d.log.Warn("rpc failed", append(attrs, "error", d.loggedError(st.Message()))...)
	} else {
		d.log.Info("rpc", attrs...)
	}
	return resp, err
}

// loggedError is an error message as logged: redacted under the
// leak-secret fault (which puts secret values in it).
func (d *Driver) loggedError(msg string) string {
	if d.faults.LeakSecret {
		return "[redacted: the leak-secret fault puts secret values in error messages]"
	}
	return msg
}

// boundedKeys returns at most maxLoggedCIDRs sorted map keys, each clipped.
func boundedKeys(m map[string]string) []string {
	ks := sortedKeys(m)
	ks = ks[:min(len(ks), maxLoggedCIDRs)]
	for i, k := range ks {
		ks[i] = clip(k)
	}
	return ks
}

// recoverInterceptor turns a panic into UNKNOWN: the error table has no
// INTERNAL, and a driver bug must not take the fence service down.
func (d *Driver) recoverInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("panic in rpc", "rpc", info.FullMethod, "panic", fmt.Sprint(r))
			resp, err = nil, status.Error(codes.Unknown, "driver error; see the driver log")
		}
	}()
	return h(ctx, req)
}
