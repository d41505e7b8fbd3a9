package writer

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/refstore"
)

// ReadBack reads the writes of the writers ids back from refstore at
// server (READ) and checks each payload as the writer contract's record
// (the contract's read mode). A payload that is not the record of its
// writer and sequence is a damaged record.
func ReadBack(server string, ids []string, timeout time.Duration) ([]contract.Record, contract.ReadDone, error) {
	done := contract.ReadDone{Done: true}
	c, err := net.DialTimeout("tcp", server, timeout)
	if err != nil {
		return nil, done, fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	rd := bufio.NewReaderSize(c, refstore.MaxLineLen+64)
	var out []contract.Record
	for _, id := range ids {
		c.SetDeadline(time.Now().Add(timeout))
		if _, err := c.Write([]byte(refstore.FormatRead(id))); err != nil {
			return out, done, fmt.Errorf("read %s: %w", id, err)
		}
		n := 0
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return out, done, fmt.Errorf("read %s: %w", id, err)
			}
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "END":
				if want, _ := strconv.Atoi(f[1]); want != n {
					return out, done, fmt.Errorf("read %s: END %s after %d records", id, f[1], n)
				}
			case len(f) >= 3 && f[0] == "REC":
				n++
				out = append(out, readRec(id, f))
				continue
			default:
				return out, done, fmt.Errorf("read %s: unexpected answer %q", id, strings.TrimSpace(line))
			}
			break
		}
		done.Writers = append(done.Writers, id)
	}
	done.Records = len(out)
	return out, done, nil
}

// readRec checks one REC line of writer id.
func readRec(id string, f []string) contract.Record {
	seq, _ := strconv.ParseUint(f[1], 10, 64)
	where := "refstore audit t_ns " + f[2]
	if len(f) < 4 {
		return contract.Record{Writer: id, Seq: seq, Where: where, Detail: "no payload: not a record of the writer contract"}
	}
	r, _ := contract.Decode(f[3])
	r.Where = where
	if r.Writer != id || r.Seq != seq {
		r.Writer, r.Seq, r.Intact = id, seq, false
		r.Detail = strings.TrimPrefix(r.Detail+", the record is not that of the write it came with", ", ")
	}
	return r
}
