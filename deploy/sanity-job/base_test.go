package sanityjob

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/sanity"
)

// flagValue is the value of --name=VALUE in args.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// mountOf is the volume mounted at the directory holding file, and the mount.
func mountOf(t *testing.T, c corev1.Container, vols []corev1.Volume, file string) (corev1.Volume, corev1.VolumeMount) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if path.Dir(file) == m.MountPath {
			for _, v := range vols {
				if v.Name == m.Name {
					return v, m
				}
			}
		}
	}
	t.Fatalf("nothing is mounted at the directory of %s", file)
	return corev1.Volume{}, corev1.VolumeMount{}
}

// TestJobBase: the base's Job does what deploy/sanity-job promises: one run
// (no retry), a deadline, the suite inside log-reports with the same
// reports directory, the secrets only as a file from the Secret (no env at
// all), the config from the ConfigMap with an endpoint inside the mounted
// plugin directory, no capabilities, a read-only root.
func TestJobBase(t *testing.T) {
	b, err := os.ReadFile("base/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		t.Fatalf("base/job.yaml: %v", err)
	}
	spec, pod := job.Spec, job.Spec.Template.Spec
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 || spec.ActiveDeadlineSeconds == nil || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("want backoffLimit 0, a deadline, restartPolicy Never: %+v, %s", spec, pod.RestartPolicy)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the suite needs no API access: automountServiceAccountToken must be false")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	i := slices.Index(c.Args, "--")
	if c.Command != nil || i < 1 || c.Args[0] != "log-reports" || c.Args[i+1] != "sanity" {
		t.Fatalf("want args log-reports ... -- sanity ..., the image's entrypoint: command %v args %v", c.Command, c.Args)
	}
	if dir := flagValue(c.Args[:i], "dir"); dir == "" || dir != flagValue(c.Args[i:], "reports") {
		t.Errorf("log-reports --dir %q and sanity --reports %q differ", dir, flagValue(c.Args[i:], "reports"))
	}
	if len(c.Env) > 0 || len(c.EnvFrom) > 0 {
		t.Errorf("the container has environment variables %v %v: secrets go only in the mounted file", c.Env, c.EnvFrom)
	}
	sv, sm := mountOf(t, c, pod.Volumes, flagValue(c.Args, "secrets-file"))
	if sv.Secret == nil || sv.Secret.SecretName != "fenceproof-sanity-secrets" || !sm.ReadOnly {
		t.Errorf("--secrets-file is not in the Secret fenceproof-sanity-secrets mounted read-only: %+v %+v", sv, sm)
	}
	cv, _ := mountOf(t, c, pod.Volumes, flagValue(c.Args, "config"))
	if cv.ConfigMap == nil || cv.ConfigMap.Name != "fenceproof-sanity-config" {
		t.Errorf("--config is not in the ConfigMap fenceproof-sanity-config: %+v", cv)
	}
	cfg := sanity.Defaults()
	if err := sanity.DecodeFile("base/sanity.yaml", &cfg); err != nil {
		t.Fatal(err)
	}
	pv, pm := mountOf(t, c, pod.Volumes, strings.TrimPrefix(cfg.Endpoint, "unix://"))
	if pv.HostPath == nil || pv.HostPath.Type == nil || *pv.HostPath.Type != corev1.HostPathDirectory || !pm.ReadOnly {
		t.Errorf("the endpoint %s is not in the plugin directory, a hostPath of type Directory mounted read-only: %+v %+v", cfg.Endpoint, pv, pm)
	}
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("want no capabilities, a read-only root and no privilege escalation: %+v", sc)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("privileged")
	}
}
