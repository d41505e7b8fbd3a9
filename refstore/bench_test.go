package refstore

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
)

// BenchmarkWrites measures acknowledged writes (each fsynced to the audit
// log before its OK) with 1 and 8 concurrent sessions; `make bench-refstore`
// prints the ratio measured in one run.
func BenchmarkWrites(b *testing.B) {
	for _, sessions := range []int{1, 8} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			dir := b.TempDir()
			s, err := New(Options{Listen: "127.0.0.1:0", Admin: "unix://" + dir + "/a.sock", AuditPath: dir + "/audit.log", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.Stop()
			per := b.N/sessions + 1
			b.ResetTimer()
			var wg sync.WaitGroup
			for i := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := net.Dial("tcp", s.Addr().String())
					if err != nil {
						b.Error(err)
						return
					}
					defer c.Close()
					r := bufio.NewReader(c)
					for seq := 1; seq <= per; seq++ {
						fmt.Fprintf(c, "WRITE bench-%d %d\n", i, seq)
						if l, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(l, "OK") {
							b.Errorf("write: %q %v", l, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*sessions)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}
