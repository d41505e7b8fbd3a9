package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// TestUserTemplateFollowsTheContract: a user's StatefulSet becomes a
// writer with the contract's environment, the log directory, the run's
// labels, its own node terms ANDed with ours, OnDelete updates; its
// reader mounts the writer's claim and reads.
func TestUserTemplateFollowsTheContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.yaml")
	os.WriteFile(path, []byte(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: mine}
spec:
  template:
    metadata: {labels: {app: mine}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: zone, operator: In, values: [z1]}]
            - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [other]}]
      containers:
      - {name: sidecar, image: s}
      - {name: writer, image: w, env: [{name: FENCEPROOF_MODE, value: bogus}, {name: KEEP, value: "1"}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`), 0o644)
	tpl, err := loadTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: Config{Namespace: "ns", Interval: 20 * time.Millisecond}, name: "run1"}
	sts := r.writerStatefulSet(tpl, "run1-app", []string{"n1", "n2"})
	spec := sts.Spec.Template.Spec
	c := spec.Containers[1]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	want := map[string]string{contract.EnvWriter: "run1-app", contract.EnvNode: "spec.nodeName", contract.EnvMode: contract.ModeWrite,
		contract.EnvLogDir: writerLogDir, contract.EnvInterval: "20ms", "KEEP": "1"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q (all: %v)", k, env[k], v, env)
		}
	}
	if len(spec.Containers[0].Env) != 0 || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == writerLogDir }) {
		t.Errorf("the contract went to the wrong container: %+v", spec.Containers)
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 2 || len(terms[0].MatchExpressions) != 2 || len(terms[1].MatchExpressions) != 1 ||
		!slices.Equal(terms[1].MatchExpressions[0].Values, []string{"n1", "n2"}) {
		t.Errorf("node terms %+v: want each of the template's terms ANDed with hostname in [n1 n2]", terms)
	}
	if sts.Spec.UpdateStrategy.Type != "OnDelete" || sts.Spec.Template.Labels["app"] != "mine" || sts.Spec.Template.Labels[LabelRun] != "run1" ||
		sts.Spec.VolumeClaimTemplates[0].Labels[LabelRun] != "run1" {
		t.Errorf("statefulset %+v", sts.Spec)
	}
	rd := r.readerPod(&writerSpec{id: "run1-app", sts: sts}, "n2")
	rc := rd.Spec.Containers[1]
	var mode, read string
	for _, e := range rc.Env {
		switch e.Name {
		case contract.EnvMode:
			mode = e.Value
		case contract.EnvRead:
			read = e.Value
		}
	}
	if mode != contract.ModeRead || read != "run1-app" || rd.Spec.RestartPolicy != corev1.RestartPolicyNever || rd.Spec.NodeSelector["kubernetes.io/hostname"] != "n2" {
		t.Errorf("reader: mode %q read %q %+v", mode, read, rd.Spec)
	}
	if !slices.ContainsFunc(rd.Spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "data-run1-app-0"
	}) {
		t.Errorf("the reader does not mount the writer's claim: %+v", rd.Spec.Volumes)
	}
	if _, err := loadTemplate(writeFile(t, "kind: Deployment\n")); err == nil || !strings.Contains(err.Error(), "Pod, a PodTemplate or a StatefulSet") {
		t.Errorf("a Deployment: %v", err)
	}
	if _, err := loadTemplate(writeFile(t, "kind: Pod\nspec: {containerz: []}\n")); err == nil {
		t.Error("a misspelt field was accepted")
	}
}

func writeFile(t *testing.T, s string) string {
	p := filepath.Join(t.TempDir(), "f.yaml")
	os.WriteFile(p, []byte(s), 0o644)
	return p
}

func TestValidateNamesTheBadFlags(t *testing.T) {
	c := Defaults()
	c.Node, c.Namespace, c.Driver = "n", "ns", "d"
	err := c.Validate()
	for _, want := range []string{"--secret", "--ceph-secret"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
	c.Secret, c.CephSecret, c.CephMonHost = "ns/s", "ns/k", "10.0.0.1"
	if err := c.Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
	c.CIDRsFrom = CIDRsFromClients
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--class") {
		t.Errorf("clients without a class: %v", err)
	}
}

func TestExitStatusesAreSanitys(t *testing.T) {
	for s, want := range map[Status]int{StatusPass: 0, StatusFail: 1, StatusUsage: 2, StatusIncomplete: 3, StatusUnreachable: 4} {
		if s.ExitCode() != want {
			t.Errorf("%s: exit %d, want %d", s, s.ExitCode(), want)
		}
	}
}

// TestParseReadTellsRecordsFromTheEnd: a reader's output, with a
// runtime's own line in between.
func TestParseReadTellsRecordsFromTheEnd(t *testing.T) {
	recs, done := parseRead([]byte(`{"writer":"w","seq":1,"node":"n","start_ns":5,"intact":true}
not json
{"writer":"w","seq":2,"intact":false,"detail":"checksum mismatch"}
{"read_done":true,"writers":["w"],"records":2}
`))
	if len(recs) != 2 || !recs[0].Intact || recs[1].Intact || recs[1].Seq != 2 || len(done) != 1 || done[0].Writers[0] != "w" {
		t.Errorf("records %+v, done %+v", recs, done)
	}
}
