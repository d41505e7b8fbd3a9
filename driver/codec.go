package driver

import (
	"fmt"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// authCodec is the server's codec. Before it decodes a FenceController
// request it reads only the request's parameters and secrets (fields 1 and
// 2 of every request) from the wire bytes; when the secrets are not the
// driver's, it decodes those two maps alone and leaves the CIDRs (most of a
// request that may be as large as --max-msg-bytes) undecoded, and the
// handler answers UNAUTHENTICATED as it would anyway. So a large request
// with a wrong secret costs its wire bytes, never the objects of its
// decoded CIDRs. Every other message is decoded by gRPC's proto codec.
type authCodec struct {
	encoding.CodecV2
	d *Driver
}

func newAuthCodec(d *Driver) authCodec {
	return authCodec{CodecV2: encoding.GetCodecV2(grpcproto.Name), d: d}
}

// fenceRequest is what every FenceController request carries, settable.
type fenceRequest interface {
	request
	proto.Message
}

// rpcOf names the RPC of a request, as the fault hooks do.
func rpcOf(v any) (string, bool) {
	switch v.(type) {
	case *fence.FenceClusterNetworkRequest:
		return "Fence", true
	case *fence.UnfenceClusterNetworkRequest:
		return "Unfence", true
	case *fence.ListClusterFenceRequest:
		return "List", true
	case *fence.GetFenceClientsRequest:
		return "GetClients", true
	}
	return "", false
}

// Unmarshal decodes v, or only its credentials when they are wrong.
func (c authCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(fenceRequest)
	rpc, isFence := rpcOf(v)
	if !ok || !isFence || len(c.d.o.Secrets) == 0 {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	b := buf.ReadOnlyData()
	params, secrets, err := readCredentials(b)
	if err != nil {
		return fmt.Errorf("decoding %T: %w", v, err)
	}
	setCredentials(r, params, secrets)
	if c.d.authenticate(rpc, r) != nil {
		return nil // the handler answers UNAUTHENTICATED; the CIDRs stay undecoded
	}
	return proto.Unmarshal(b, r)
}

// readCredentials reads the parameters (field 1) and secrets (field 2) maps
// of a request from its wire bytes, skipping every other field unread.
func readCredentials(b []byte) (params, secrets map[string]string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, protowire.ParseError(n)
		}
		b = b[n:]
		if (num == 1 || num == 2) && typ == protowire.BytesType {
			entry, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, nil, protowire.ParseError(m)
			}
			k, v, err := readEntry(entry)
			if err != nil {
				return nil, nil, err
			}
			if num == 1 {
				params = setKey(params, k, v)
			} else {
				secrets = setKey(secrets, k, v)
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, nil, protowire.ParseError(m)
		}
		b = b[m:]
	}
	return params, secrets, nil
}

// readEntry reads one map<string, string> entry: key 1, value 2.
func readEntry(b []byte) (k, v string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "", protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType || (num != 1 && num != 2) {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return "", "", protowire.ParseError(m)
			}
			b = b[m:]
			continue
		}
		s, m := protowire.ConsumeString(b)
		if m < 0 {
			return "", "", protowire.ParseError(m)
		}
		if num == 1 {
			k = s
		} else {
			v = s
		}
		b = b[m:]
	}
	return k, v, nil
}

func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// setCredentials puts the maps read from the wire on the request.
func setCredentials(r fenceRequest, params, secrets map[string]string) {
	switch x := r.(type) {
	case *fence.FenceClusterNetworkRequest:
		x.Parameters, x.Secrets = params, secrets
	case *fence.UnfenceClusterNetworkRequest:
		x.Parameters, x.Secrets = params, secrets
	case *fence.ListClusterFenceRequest:
		x.Parameters, x.Secrets = params, secrets
	case *fence.GetFenceClientsRequest:
		x.Parameters, x.Secrets = params, secrets
	}
}
