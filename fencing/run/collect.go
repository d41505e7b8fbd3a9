package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/fencing/judge"
	"github.com/fenceproof/fenceproof/fencing/report"
)

// collect fills in the judge's input: every writer's log from every node
// it may have run on (through the agents), and the read-back of its
// records by a reader on the peer node. The raw files go to the run's
// evidence directory.
func (r *runner) collect(ctx context.Context, in *judge.Input) error {
	dir := filepath.Join(r.reportDir(), "evidence")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return setup(err, "evidence directory")
	}
	for _, w := range r.writers {
		in.Writers = append(in.Writers, w.id)
		for _, node := range r.writerNodes(w) {
			b, err := r.agentLog(ctx, node, w.id)
			if err != nil {
				continue // it never wrote there
			}
			name := fmt.Sprintf("writer-%s-%s.log", w.id, node)
			_ = os.WriteFile(filepath.Join(dir, name), b, 0o644)
			in.Logs = append(in.Logs, judge.Log{Writer: w.id, Node: node, Source: fmt.Sprintf("%s:%s/%s/%s.log (evidence/%s)", node, hostLogRoot, r.name, w.id, name), Attempts: parseAttempts(b)})
		}
	}
	r.step(report.StepInfo, "writer logs collected: %d", len(in.Logs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(r.writers))
	for i, w := range r.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := r.readBack(ctx, w)
			_ = os.WriteFile(filepath.Join(dir, "read-"+w.id+".jsonl"), out, 0o644)
			recs, done := parseRead(out)
			mu.Lock()
			in.Records = append(in.Records, recs...)
			in.ReadDone = append(in.ReadDone, done...)
			mu.Unlock()
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			r.step(report.StepInfo, "read-back of %s: %v", r.writers[i].id, err)
		}
	}
	r.step(report.StepInfo, "read back on %s: %d records", r.cfg.PeerNode, len(in.Records))
	return nil
}

// readBack runs writer w's reader on the peer node and returns its output.
func (r *runner) readBack(ctx context.Context, w *writerSpec) ([]byte, error) {
	p := r.readerPod(w, r.cfg.PeerNode)
	if _, err := r.cs.CoreV1().Pods(r.cfg.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	got, err := r.waitPod(ctx, p.Name, podTimeout, true)
	b, lerr := r.cs.CoreV1().Pods(r.cfg.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return b, err
	}
	if got.Status.Phase != corev1.PodSucceeded {
		return b, fmt.Errorf("reader %s: %s", p.Name, podState(got))
	}
	return b, lerr
}

// parseRead reads a reader's output: records and read_done lines.
func parseRead(b []byte) ([]contract.Record, []contract.ReadDone) {
	var recs []contract.Record
	var done []contract.ReadDone
	for _, line := range contract.ParseLines[struct {
		contract.Record
		contract.ReadDone
	}](b) {
		switch {
		case line.ReadDone.Done:
			done = append(done, line.ReadDone)
		case line.Writer != "":
			recs = append(recs, line.Record)
		}
	}
	return recs, done
}
