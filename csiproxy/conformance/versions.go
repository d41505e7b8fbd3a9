package conformance

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// versionSpecs registers VER-001..003 and PIPE-001.
func versionSpecs(s *state) {
	s.it("PIPE-001", func(ctx context.Context) {
		var f failures
		v := restrict.New()
		for _, name := range s.served {
			if _, _, err := v.ParsePipe(name); err != nil {
				f.add("%s", err)
			}
		}
		f.check()
	})
	s.it("VER-001", func(ctx context.Context) {
		var f failures
		for _, g := range restrict.Groups {
			if !slices.ContainsFunc(s.served, func(n string) bool { return strings.HasPrefix(n, "csi-proxy-"+g+"-") }) {
				f.add("no version of %s is served", g)
			}
		}
		for _, g := range []string{"disk", "filesystem", "smb", "volume"} {
			if !slices.Contains(s.served, restrict.PipeBase(g, "v1")) {
				f.add("%s v1 (stable) is not served", g)
			}
		}
		f.check()
	})
	s.it("VER-002", func(ctx context.Context) {
		var f failures
		for _, name := range s.served {
			cctx, cancel := s.call(ctx)
			err := s.conns[name].Invoke(cctx, "/fenceproof.Probe/Ping", &emptypb.Empty{}, &emptypb.Empty{})
			cancel()
			if status.Code(err) != codes.Unimplemented {
				f.add("%s does not answer gRPC: %v", name, err)
			}
		}
		f.check()
	})
	s.it("VER-003", func(ctx context.Context) {
		rulebook.Note("served: %s", strings.Join(s.served, " "))
	})
}

// codeSpecs checks the codes of every refusal the run saw.
func codeSpecs(s *state) {
	s.it("CODE-001", func(ctx context.Context) {
		if len(s.refusals) == 0 {
			rulebook.NotRun("no refusal observed (rules filtered out)")
		}
		var f failures
		for _, r := range s.refusals {
			if r.code != codes.InvalidArgument && r.code != codes.FailedPrecondition {
				f.add("%s: refused with %s", r.what, r.code)
			}
		}
		rulebook.Note("%d refusals checked", len(s.refusals))
		f.check()
	})
}
