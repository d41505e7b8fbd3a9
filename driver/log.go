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

	"github.com/fenceproof/fenceproof/driver/fault"
)

// MaxLoggedCIDRs bounds the cidrs logged per RPC (and on the ready line);
// cidr_count has the total, so a reader knows when the list is cut.
const MaxLoggedCIDRs = 1024

// The driver's log lines and keys that tools read (audit, the
// oracle): one line per RPC, with the RPC's start and return times in unix
// ns, and one line when the driver is ready, with the fences it re-applied.
const (
	MsgRPC       = "rpc"          // an RPC that returned OK
	MsgRPCFailed = "rpc failed"   // an RPC that returned an error
	MsgReady     = "driver ready" // New finished: every stored fence is enforced again
	KeyRPC       = "rpc"          // FenceClusterNetwork, UnfenceClusterNetwork, ...
	KeyCode      = "code"         // gRPC code name, "OK" on success
	KeyCIDRs     = "cidrs"        // the CIDRs as the request carried them (ready line: stored fences)
	KeyCIDRCount = "cidr_count"   // how many there were
	KeyStartNs   = "start_ns"     // unix ns when the RPC reached the driver
	KeyTimeNs    = "t_ns"         // unix ns when the RPC returned (ready line: when ready)
)

func boundedCIDRs(all []string) []string {
	return all[:min(len(all), MaxLoggedCIDRs)]
}

// logInterceptor logs one structured line per RPC: rpc, cidrs, the names
// (never the values) of the secrets carried, code, duration, and the start
// and return times in unix ns (the oracle compares the return time of a
// Fence with the storage side's audit log).
func (d *Driver) logInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	end := time.Now()
	st := status.Convert(err)
	attrs := []any{KeyRPC, path.Base(info.FullMethod), KeyCode, st.Code().String(), "duration", end.Sub(start),
		KeyStartNs, start.UnixNano(), KeyTimeNs, end.UnixNano()}
	if c := st.Code(); c == codes.Unauthenticated || c == codes.PermissionDenied {
		// Nothing of an unauthenticated request but its size.
		if m, ok := req.(proto.Message); ok {
			attrs = append(attrs, "request_bytes", proto.Size(m))
		}
		d.log.Warn(MsgRPCFailed, append(attrs, "error", d.loggedError(st.Message()))...)
		return resp, err
	}
	if r, ok := req.(interface{ GetCidrs() []*fence.CIDR }); ok {
		all := r.GetCidrs()
		cidrs := make([]string, 0, min(len(all), MaxLoggedCIDRs))
		for _, c := range all[:min(len(all), MaxLoggedCIDRs)] {
			cidrs = append(cidrs, clip(c.GetCidr()))
		}
		attrs = append(attrs, KeyCIDRs, cidrs, KeyCIDRCount, len(all))
	}
	if r, ok := req.(request); ok {
		attrs = append(attrs, "secret_keys", boundedKeys(r.GetSecrets()))
	}
	if err != nil {
		d.log.Warn(MsgRPCFailed, append(attrs, "error", d.loggedError(st.Message()))...)
	} else {
		d.log.Info(MsgRPC, attrs...)
	}
	return resp, err
}

// loggedError is an error message as logged: redacted when a fault acts at
// the message hook (leak-secret puts secret values in it).
func (d *Driver) loggedError(msg string) string {
	if d.faults.Acts(fault.AtMessage) {
		return "[redacted: a fault puts secret values in error messages]"
	}
	return msg
}

// maxLoggedKeys bounds the secret and parameter names logged per RPC.
const maxLoggedKeys = 16

// boundedKeys returns at most maxLoggedKeys sorted map keys, each clipped.
func boundedKeys(m map[string]string) []string {
	ks := sortedKeys(m)
	ks = ks[:min(len(ks), maxLoggedKeys)]
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
