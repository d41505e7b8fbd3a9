package sanityjob

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The CI recipes of docs/ci run here as written, in a copy of what their
// header tells a vendor to copy, against a stand-in kubectl: kustomize is
// the real one (kubectl kustomize), the cluster is a script that answers
// run.sh's questions as a cluster whose Job ran the fenceproof image would,
// with the log of a real run (log-reports around sanity against the
// reference driver). The Job itself runs on kind in suites/image.

// sandbox is a vendor's repository: deploy/sanity-job/{base,run.sh} and the
// example overlay copied to my-driver, and bin/kubectl, the stand-in.
type sandbox struct {
	dir, bin, calls, applied string
}

func newSandbox(t *testing.T, jobLog []byte, exitCode int) sandbox {
	t.Helper()
	real, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl on PATH: the recipes render the Job with kubectl kustomize")
	}
	s := sandbox{dir: t.TempDir()}
	s.bin, s.calls, s.applied = filepath.Join(s.dir, "bin"), filepath.Join(s.dir, "kubectl.calls"), filepath.Join(s.dir, "applied.yaml")
	for _, c := range [][2]string{{"base", "deploy/sanity-job/base"}, {"example", "deploy/sanity-job/my-driver"}, {"run.sh", "deploy/sanity-job/run.sh"}} {
		if out, err := exec.Command("cp", "-r", c[0], filepath.Join(s.dir, c[1])).CombinedOutput(); err != nil {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(s.dir, c[1])), 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err = exec.Command("cp", "-r", c[0], filepath.Join(s.dir, c[1])).CombinedOutput(); err != nil {
				t.Fatalf("cp %s: %v %s", c[0], err, out)
			}
		}
	}
	os.Remove(filepath.Join(s.dir, "deploy/sanity-job/my-driver/secrets.yaml")) // the recipe writes it
	os.MkdirAll(s.bin, 0o755)
	logFile := filepath.Join(s.dir, "job.log")
	os.WriteFile(logFile, jobLog, 0o644)
	state := "Complete"
	if exitCode != 0 {
		state = "Failed"
	}
	// The stand-in: run.sh's calls, answered; the kubeconfig must be the
	// one the recipe wrote.
	os.WriteFile(filepath.Join(s.bin, "kubectl"), []byte(`#!/bin/bash
echo "$*" >> `+s.calls+`
[[ "$(cat "$KUBECONFIG" 2>/dev/null)" == "kubeconfig of the driver's cluster" ]] || { echo "kubectl: no kubeconfig ($KUBECONFIG)" >&2; exit 1; }
args=" $* "
case "$args" in
  " kustomize "*) exec `+real+` "$@" ;;
  *" apply -f "*) cat "${@: -1}" > `+s.applied+` ;;
  *" get namespace "*|*" delete job "*|*" get events "*) ;;
  *" get job "*) echo "`+state+` " ;;
  *" get pods "*) echo fenceproof-sanity-x7k2p ;;
  *"terminated.exitCode"*) echo `+fmt.Sprint(exitCode)+` ;;
  *".spec.nodeName"*) echo worker-1 ;;
  *" get pod "*) ;;
  *" logs "*) cat `+logFile+` ;;
  *" config view "*) ;;
  *) echo "kubectl stand-in: unexpected call: $*" >&2; exit 1 ;;
esac
`), 0o755)
	return s
}

// env is the environment of a recipe's step in the sandbox.
func (s sandbox) env(extra ...string) []string {
	return append(append(os.Environ(), "PATH="+s.bin+string(os.PathListSeparator)+os.Getenv("PATH")), extra...)
}

// expand replaces ${{ secrets.X }}, ${{ vars.X }} and ${{ env.X }} the way
// GitHub does, from values.
func expand(t *testing.T, v string, values map[string]string) string {
	return regexp.MustCompile(`\$\{\{\s*(secrets|vars|env)\.([A-Za-z_]+)\s*\}\}`).ReplaceAllStringFunc(v, func(m string) string {
		k := regexp.MustCompile(`\.([A-Za-z_]+)`).FindStringSubmatch(m)[1]
		val, ok := values[k]
		if !ok {
			t.Errorf("the recipe reads %s, which the test does not set", m)
		}
		return val
	})
}

type ghWorkflow struct {
	Jobs map[string]struct {
		Env   map[string]string
		Steps []struct {
			Name, Uses, Run, If string
			Env                 map[string]string
			With                map[string]string
		}
	}
}

// runGitHubWorkflow runs the run: steps of docs/ci/github-actions.yml in
// order as GitHub would (bash -e, the job's and the step's env, GITHUB_ENV
// carried over, steps after a failure only if: always()), and returns each
// step's exit status by name and the steps' output.
func runGitHubWorkflow(t *testing.T, s sandbox, values map[string]string) (map[string]int, string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/ci/github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf ghWorkflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("docs/ci/github-actions.yml: %v", err)
	}
	job, ok := wf.Jobs["sanity"]
	if !ok || len(wf.Jobs) != 1 {
		t.Fatalf("want one job, sanity: %v", wf.Jobs)
	}
	runnerTemp, ghEnv, summary := t.TempDir(), filepath.Join(s.dir, "github.env"), filepath.Join(s.dir, "summary.md")
	os.WriteFile(ghEnv, nil, 0o644)
	env := s.env("RUNNER_TEMP="+runnerTemp, "GITHUB_ENV="+ghEnv, "GITHUB_STEP_SUMMARY="+summary, "GITHUB_ACTIONS=true")
	for k, v := range job.Env {
		env = append(env, k+"="+expand(t, v, values))
		values[k] = expand(t, v, values)
	}
	codes := map[string]int{}
	var out bytes.Buffer
	failed := false
	for _, st := range job.Steps {
		if st.Run == "" || (failed && st.If != "always()") {
			continue
		}
		stepEnv := slices.Clone(env)
		for k, v := range st.Env {
			stepEnv = append(stepEnv, k+"="+expand(t, v, values))
		}
		if b, _ := os.ReadFile(ghEnv); len(b) > 0 {
			stepEnv = append(stepEnv, strings.Split(strings.TrimSpace(string(b)), "\n")...)
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(t, st.Run, values))
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.dir, stepEnv, &out, &out
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code, failed = ee.ExitCode(), true
		}
		codes[st.Name] = code
	}
	return codes, out.String()
}

const (
	kubeconfigData = "kubeconfig of the driver's cluster"
	imageRef       = "registry.example.com/qa/fenceproof:v9.9.9-test"
	runStep        = "Run the sanity Job and gate on its JUnit"
)

// TestGitHubWorkflowRunsAsWritten: the workflow's steps, as written, render
// the vendor's overlay with the image from the repository variable, write
// the secrets only to a file that becomes the Secret (never printed), fetch
// the reports from the Job's log, gate on the JUnit (the run step fails
// exactly when the suite failed), keep a summary, and remove the secrets'
// files even after a failure.
func TestGitHubWorkflowRunsAsWritten(t *testing.T) {
	secrets := "userID: ci-user\nuserKey: s3cr3t-" + fmt.Sprint(os.Getpid())
	for _, tc := range []struct {
		name      string
		args      []string
		exit      int
		wantRules []string
	}{
		{"conforming driver", nil, 0, nil},
		{"broken driver", []string{"--driver-fault", "no-auth"}, 1, []string{"ERR-003", "ERR-004"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, log := jobLog(t, tc.args...)
			if code != tc.exit {
				t.Fatalf("the Job's run: exit %d, want %d", code, tc.exit)
			}
			s := newSandbox(t, log, code)
			codes, out := runGitHubWorkflow(t, s, map[string]string{"KUBECONFIG": kubeconfigData,
				"FENCEPROOF_SECRETS": secrets, "FENCEPROOF_IMAGE": imageRef})
			for name, c := range codes {
				if want := map[bool]int{true: tc.exit, false: 0}[name == runStep]; c != want {
					t.Errorf("step %q: exit %d, want %d\n%s", name, c, want, out)
				}
			}
			if _, ok := codes[runStep]; !ok || len(codes) < 4 {
				t.Fatalf("steps run: %v", codes)
			}
			if strings.Contains(out, "s3cr3t") {
				t.Errorf("the secret's value is in the workflow's output")
			}
			for _, id := range tc.wantRules {
				if !strings.Contains(out, "::error title=fenceproof sanity "+id+"::") {
					t.Errorf("no GitHub annotation for the failed rule %s:\n%s", id, out)
				}
			}
			checkApplied(t, s, secrets)
			for _, f := range []string{"reports/sanity-junit.xml", "reports/sanity.html", "reports/job.log"} {
				if _, err := os.Stat(filepath.Join(s.dir, f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(s.dir, "summary.md")); !bytes.Contains(b, []byte("fenceproof sanity")) {
				t.Errorf("the step summary is %q, want the suite's Markdown report", b)
			}
			if _, err := os.Stat(filepath.Join(s.dir, "deploy/sanity-job/my-driver/secrets.yaml")); err == nil {
				t.Error("the secrets file outlives the workflow")
			}
		})
	}
}

// checkApplied: what reached the cluster is the vendor's overlay with the
// image of the variable, and the secrets only as the Secret's data.
func checkApplied(t *testing.T, s sandbox, secrets string) {
	t.Helper()
	b, err := os.ReadFile(s.applied)
	if err != nil {
		t.Fatalf("nothing applied: %v", err)
	}
	applied := string(b)
	if !strings.Contains(applied, "image: "+imageRef+"\n") {
		t.Errorf("the applied Job does not run %s:\n%s", imageRef, applied)
	}
	m := regexp.MustCompile(`(?m)^  secrets\.yaml: (\S+)$`).FindStringSubmatch(applied)
	if m == nil {
		t.Fatalf("no Secret with secrets.yaml applied:\n%s", applied)
	}
	if got, err := base64.StdEncoding.DecodeString(m[1]); err != nil || strings.TrimSpace(string(got)) != secrets {
		t.Errorf("the Secret's secrets.yaml is not the CI secret (%v)", err)
	}
	if strings.Contains(applied, "s3cr3t") {
		t.Error("the secret's value is in the applied objects in clear (args, env or a ConfigMap)")
	}
}

// TestGitLabJobRunsAsWritten: the GitLab job's script and after_script, as
// written, with its File variables, do what the GitHub workflow does.
func TestGitLabJobRunsAsWritten(t *testing.T) {
	code, log := jobLog(t, "--driver-fault", "no-auth")
	s := newSandbox(t, log, code)
	b, err := os.ReadFile("../../docs/ci/gitlab-ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	var jobs map[string]struct {
		Variables   map[string]string
		Script      []string
		AfterScript []string `json:"after_script"`
		Artifacts   struct {
			When    string
			Reports struct{ JUnit string }
		}
	}
	if err := yaml.Unmarshal(b, &jobs); err != nil {
		t.Fatalf("docs/ci/gitlab-ci.yml: %v", err)
	}
	job, ok := jobs["fence-conformance"]
	if !ok {
		t.Fatalf("no job fence-conformance: %v", jobs)
	}
	secrets := "userKey: s3cr3t-gitlab"
	files := map[string]string{"KUBECONFIG": kubeconfigData, "FENCEPROOF_SECRETS": secrets}
	env := s.env("FENCEPROOF_IMAGE=" + imageRef)
	for k, v := range files {
		p := filepath.Join(t.TempDir(), k)
		os.WriteFile(p, []byte(v), 0o600)
		env = append(env, k+"="+p)
	}
	for k, v := range job.Variables {
		env = append(env, k+"="+v)
	}
	run := func(lines []string) (int, string) {
		cmd := exec.Command("bash", "-e", "-c", strings.Join(lines, "\n"))
		cmd.Dir, cmd.Env = s.dir, env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	if rc, out := run(job.Script); rc != 1 || strings.Contains(out, "s3cr3t") {
		t.Errorf("script against a broken driver: exit %d, want 1, and no secret in the output:\n%s", rc, out)
	}
	checkApplied(t, s, secrets)
	if rc, out := run(job.AfterScript); rc != 0 {
		t.Errorf("after_script: exit %d:\n%s", rc, out)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "deploy/sanity-job/my-driver/secrets.yaml")); err == nil {
		t.Error("the secrets file outlives the job")
	}
	if job.Artifacts.When != "always" || job.Artifacts.Reports.JUnit != "reports/sanity-junit.xml" {
		t.Errorf("artifacts: when %q, junit %q; want always and the JUnit run.sh extracts", job.Artifacts.When, job.Artifacts.Reports.JUnit)
	}
	if _, err := os.Stat(filepath.Join(s.dir, job.Artifacts.Reports.JUnit)); err != nil {
		t.Errorf("the JUnit the job publishes: %v", err)
	}
}

// TestRecipesBuildNothingOfOurs: the recipes run the image; they never
// build, fetch or install fenceproof.
func TestRecipesBuildNothingOfOurs(t *testing.T) {
	for _, f := range []string{"../../docs/ci/github-actions.yml", "../../docs/ci/gitlab-ci.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			if m := regexp.MustCompile(`\b(make|go (build|install|run)|docker (build|pull|load)|git clone|curl|wget)\b`).FindString(line); m != "" {
				t.Errorf("%s: %q builds or fetches something (%s)", f, strings.TrimSpace(line), m)
			}
		}
	}
}
