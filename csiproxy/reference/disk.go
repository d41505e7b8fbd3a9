//go:build csiproxy_disk

package reference

import (
	disksrv "github.com/kubernetes-csi/csi-proxy/pkg/server/disk"
	srvtypes "github.com/kubernetes-csi/csi-proxy/pkg/server/types"

	"github.com/fenceproof/fenceproof/csiproxy/winos"
)

func init() {
	diskGroup = func(o *winos.OS) (srvtypes.APIGroup, error) { return disksrv.NewServer(o) }
}
