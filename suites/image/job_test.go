package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// repoDir is the repository root (from this file).
func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// jobRun is one run of deploy/sanity-job/run.sh: its exit status and
// output, the reports it extracted, and the Job it left.
type jobRun struct {
	code    int
	out     string
	reports string
	job     *batchv1.Job
	err     error
}

// writeOverlay writes, in a directory of its own, the overlay a vendor
// writes over deploy/sanity-job/example for driver d: its node, its plugin
// directory, the suite's config with d's parameter, d's secrets, this
// suite's namespace, and a name suffix so that several Jobs coexist.
func writeOverlay(dir string, d referenceDriver) error {
	example, err := filepath.Rel(dir, filepath.Join(repoDir(), "deploy", "sanity-job", "example"))
	if err != nil {
		return err
	}
	files := map[string]string{
		"kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
nameSuffix: -%s
resources:
  - %s
patches:
  - patch: |-
      apiVersion: batch/v1
      kind: Job
      metadata:
        name: fenceproof-sanity
      spec:
        template:
          spec:
            nodeName: %s
            volumes:
              - name: plugin-dir
                hostPath:
                  path: %s
configMapGenerator:
  - name: fenceproof-sanity-config
    behavior: replace
    files: [sanity.yaml]
secretGenerator:
  - name: fenceproof-sanity-secrets
    behavior: replace
    files: [secrets.yaml]
`, namespace, d.id, example, d.node, d.pluginDir()),
		"sanity.yaml":  fmt.Sprintf("endpoint: unix:///csi/%s\nparameters:\n  %s: %s\n", socketName, paramKey, d.param),
		"secrets.yaml": d.secretsYAML(),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// runJob runs run.sh on d's overlay, as a vendor's CI does, and reads the
// Job it left.
func runJob(ctx context.Context, work string, d referenceDriver) jobRun {
	overlay := filepath.Join(work, "overlay-"+d.id)
	r := jobRun{reports: filepath.Join(*flagReports, "job-"+d.id)}
	if r.err = writeOverlay(overlay, d); r.err != nil {
		return r
	}
	_ = os.RemoveAll(r.reports)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoDir(), "deploy", "sanity-job", "run.sh"), overlay, r.reports)
	cmd.Env = append(os.Environ(), "IMAGE="+image, "KUBECTL="+kubectl(), "KUBECONFIG="+cluster.Kubeconfig, "TIMEOUT=480")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r.out = out.String()
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.err = err
		return r
	}
	r.job, r.err = k.CS.BatchV1().Jobs(namespace).Get(ctx, "fenceproof-sanity-"+d.id, metav1.GetOptions{})
	return r
}

// jobCondition reports whether the Job has condition t true.
func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == "True" {
			return true
		}
	}
	return false
}
