package image

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/internal/e2e"
)

// imageCases is the suite's case table; IDs are stable (reports and CI
// history refer to them) and never reused. TestCaseTable checks it against
// the specs.
var imageCases = e2e.Cases{Suite: "image", Prefix: "IMAGE", List: []e2e.Case{
	{ID: "IMAGE-001", Area: "cli", Cluster: e2e.Shared,
		Title: "docker run: --help exits 0, version prints the tag's version, the Ceph build is in, the default user is uid 65532"},
	{ID: "IMAGE-002", Area: "docker-run", Cluster: e2e.Shared,
		Title: "docker run sanity against the reference driver's socket on the host, mounted into the container: CONFORMS, reports in the mounted directory"},
	{ID: "IMAGE-003", Area: "job", Cluster: e2e.Shared,
		Title: "the sanity Job against the reference driver and its csi-addons sidecar on a worker: CONFORMS, the Job completes, JUnit and HTML fetched from its log"},
	{ID: "IMAGE-004", Area: "job", Cluster: e2e.Shared,
		Title: "the sanity Job against a broken reference driver: DOES NOT CONFORM, exit 1, the Job fails, exactly the fault's rules fail"},
}}

// tagVersion is the version in the image's tag (what `fenceproof version`
// must print).
func tagVersion() string {
	_, tag, _ := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	return tag
}

var _ = Describe("docker run", Ordered, func() {
	var id string
	BeforeAll(func(ctx SpecContext) {
		var err error
		id, err = hostImage(ctx)
		Expect(err).NotTo(HaveOccurred())
		if id == "" {
			Skip("this machine has no archive of the image (built elsewhere): docker run cases skipped")
		}
	}, NodeTimeout(5*time.Minute))

	imageCases.It("IMAGE-001", func(ctx SpecContext) {
		code, out := docker(ctx, "run", "--rm", image)
		Expect(code).To(Equal(0), "docker run IMAGE (its CMD, --help):\n%s", out)
		for _, cmd := range []string{"sanity", "log-reports", "driver", "writer", "ceph-writer", "version"} {
			Expect(out).To(MatchRegexp(`(?m)^  `+regexp.QuoteMeta(cmd)+` `), "the help lists no %s", cmd)
		}
		for _, args := range [][]string{{"version"}, {"--version"}} {
			code, out = docker(ctx, append([]string{"run", "--rm", image}, args...)...)
			Expect(code).To(Equal(0))
			Expect(out).To(HavePrefix("fenceproof "+tagVersion()+" ("), "fenceproof %s in %s", args[0], image)
			Expect(out).To(ContainSubstring("with ceph"))
		}
		_, out = docker(ctx, "run", "--rm", "--entrypoint", "/usr/bin/id", image, "-u")
		Expect(strings.TrimSpace(out)).To(Equal("65532"), "the image's default user")
		_, out = docker(ctx, "image", "inspect", "-f", `{{index .Config.Labels "org.opencontainers.image.version"}} {{.Id}}`, image)
		Expect(strings.Fields(out)).To(Equal([]string{tagVersion(), id}), "the version label and the build under the tag")
	}, NodeTimeout(3*time.Minute))

	imageCases.It("IMAGE-002", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		bin, err := hostDriver(ctx, dir)
		Expect(err).NotTo(HaveOccurred())
		secret := randHex(12)
		for name, content := range map[string]string{"etc/secrets.yaml": "userKey: " + secret + "\n"} {
			Expect(os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)).To(Succeed())
		}
		Expect(os.MkdirAll(filepath.Join(dir, "csi"), 0o755)).To(Succeed())
		// The driver on the host, as root: its socket is root's (mode 0600).
		drv := exec.Command(bin, "driver", "--endpoint", "unix://"+filepath.Join(dir, "csi", socketName),
			"--state", filepath.Join(dir, "fences.db"), "--secrets-file", filepath.Join(dir, "etc", "secrets.yaml"),
			"--require-param", paramKey+"=host-cluster")
		drv.Stdout, drv.Stderr = GinkgoWriter, GinkgoWriter
		Expect(drv.Start()).To(Succeed())
		DeferCleanup(func() { _ = drv.Process.Kill(); _ = drv.Wait() })
		reports := filepath.Join(*flagReports, "docker-run")
		Expect(os.RemoveAll(reports)).To(Succeed())
		Expect(os.MkdirAll(reports, 0o755)).To(Succeed())
		// README, "Running the image": as written there.
		run := func(user string, suiteArgs ...string) (int, string) {
			args := append([]string{"run", "--rm", "--user", user, "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
				"--read-only", "--tmpfs", "/tmp",
				"-v", filepath.Join(dir, "csi") + ":/csi:ro", "-v", filepath.Join(dir, "etc") + ":/etc/fenceproof:ro",
				"-v", reports + ":/reports",
				image, "sanity", "--endpoint", "unix:///csi/" + socketName, "--param", paramKey + "=host-cluster", "--no-color"}, suiteArgs...)
			return docker(ctx, args...)
		}
		code, out := run("0", "--secrets-file", "/etc/fenceproof/secrets.yaml")
		GinkgoWriter.Println(out)
		Expect(code).To(Equal(0), "docker run sanity as uid 0 (no capabilities):\n%s", tail(out))
		Expect(out).To(ContainSubstring("\nverdict: CONFORMS\n"))
		for _, f := range []string{"sanity-junit.xml", "sanity.html", "sanity.json"} {
			Expect(filepath.Join(reports, f)).To(BeAnExistingFile(), "the report in the mounted directory")
		}
		Expect(secretIn(secret, out, reports)).To(BeEmpty(), "the secret's value in the output or the reports")
		// The image's own user cannot connect to a socket that is root's
		// (connect(2) needs write permission on it): the README says so,
		// and the run says UNREACHABLE.
		code, out = run("65532", "--secret", "userKey=not-read", "--connect-timeout", "2s", "--reports", "/tmp/reports")
		Expect(code).To(Equal(4), "as uid 65532 against a root socket:\n%s", tail(out))
		Expect(out).To(ContainSubstring("connect: permission denied"))
	}, NodeTimeout(5*time.Minute))
})

var _ = Describe("the sanity Job", Ordered, func() {
	var faithful, broken jobRun
	var drivers []referenceDriver
	BeforeAll(func(ctx SpecContext) {
		workers, err := e2e.WorkerNodes(ctx, k.CS)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(workers)).To(BeNumerically(">=", 1))
		drivers = []referenceDriver{
			{id: "faithful", node: workers[0], secretKey: "userKey", secretValue: randHex(12), param: "incluster-" + randHex(3)},
			{id: "broken", node: workers[len(workers)-1], secretKey: "userKey", secretValue: randHex(12), param: "incluster-" + randHex(3),
				faults: []string{*flagFault}},
		}
		t0 := time.Now()
		DeferCleanup(func(ctx SpecContext) { Expect(removeDrivers(ctx)).To(Succeed()) }, NodeTimeout(5*time.Minute))
		Expect(deployDrivers(ctx, drivers...)).To(Succeed())
		logf("deployed the reference driver on %s and the one with --fault=%s on %s, each with the csi-addons sidecar, in %s",
			drivers[0].node, *flagFault, drivers[1].node, time.Since(t0).Round(time.Millisecond))
		// Both Jobs at once: each case then judges its own run.
		work := GinkgoT().TempDir()
		done := make(chan struct{})
		go func() { defer close(done); broken = runJob(ctx, work, drivers[1]) }()
		faithful = runJob(ctx, work, drivers[0])
		<-done
		logf("run.sh: faithful exit %d, broken exit %d, both in %s", faithful.code, broken.code, time.Since(t0).Round(time.Millisecond))
		for _, r := range []jobRun{faithful, broken} {
			_ = os.MkdirAll(r.reports, 0o755)
			_ = os.WriteFile(filepath.Join(r.reports, "run.sh.log"), []byte(r.out), 0o644)
		}
	}, NodeTimeout(15*time.Minute))

	imageCases.It("IMAGE-003", func(ctx SpecContext) {
		r := faithful
		Expect(r.err).NotTo(HaveOccurred(), "run.sh:\n%s", r.out)
		Expect(r.code).To(Equal(0), "run.sh against the reference driver:\n%s", tail(r.out))
		Expect(jobCondition(r.job, batchv1.JobComplete)).To(BeTrue(), "the Job's conditions: %v", r.job.Status.Conditions)
		log := readFile(filepath.Join(r.reports, "job.log"))
		Expect(log).To(ContainSubstring("\nverdict: CONFORMS\n"))
		Expect(log).To(ContainSubstring(", fenceproof "+tagVersion()+", exit status 0 ====="), "the Job ran the image's version")
		Expect(log).To(ContainSubstring("endpoint unix:///csi/" + socketName + " (from --config /etc/fenceproof/config/sanity.yaml)"))
		Expect(verdictOf(r.reports)).To(Equal("CONFORMS"))
		Expect(filepath.Join(r.reports, "sanity.html")).To(BeAnExistingFile())
		Expect(failedRules(r.reports)).To(BeEmpty())
		jobJSON, err := json.Marshal(r.job)
		Expect(err).NotTo(HaveOccurred())
		Expect(secretIn(drivers[0].secretValue, string(jobJSON)+r.out, r.reports)).To(BeEmpty(),
			"the secret's value in the Job object (args, env), the log or the reports")
	})

	imageCases.It("IMAGE-004", func(ctx SpecContext) {
		r := broken
		Expect(r.err).NotTo(HaveOccurred(), "run.sh:\n%s", r.out)
		Expect(r.code).To(Equal(1), "run.sh against --fault=%s:\n%s", *flagFault, tail(r.out))
		Expect(jobCondition(r.job, batchv1.JobFailed)).To(BeTrue(), "the Job's conditions: %v", r.job.Status.Conditions)
		pods, err := k.CS.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + r.job.Name})
		Expect(err).NotTo(HaveOccurred())
		Expect(pods.Items).To(HaveLen(1), "backoffLimit 0: one pod")
		st := pods.Items[0].Status.ContainerStatuses
		Expect(st).To(HaveLen(1))
		Expect(st[0].State.Terminated).NotTo(BeNil())
		Expect(st[0].State.Terminated.ExitCode).To(Equal(int32(1)), "the container's exit status is the suite's")
		Expect(verdictOf(r.reports)).To(Equal("DOES NOT CONFORM"))
		want := proofOf(*flagFault)
		Expect(failedRules(r.reports)).To(Equal(want), "the rules --fault=%s must fail (driver/fault's table)", *flagFault)
		Expect(r.out).To(ContainSubstring("failed: "+strings.Join(want, " ")), "run.sh's gate names the failed rules")
	})
})

// proofOf is the sorted set of rules the fault's proof fails.
func proofOf(name string) []string {
	for _, f := range fault.All() {
		if f.Name == name {
			Expect(f.Proofs).NotTo(BeEmpty(), "fault %s has no proof", name)
			Expect(f.Proofs[0].Flags).To(BeEmpty(), "fault %s's proof needs suite flags the Job does not pass", name)
			out := slices.Clone(f.Proofs[0].Fails)
			slices.Sort(out)
			return out
		}
	}
	Fail("no fault " + name)
	return nil
}

// verdictOf reads the run verdict of the JSON report.
func verdictOf(reports string) string {
	var r struct{ Verdict string }
	b := readFile(filepath.Join(reports, "sanity.json"))
	Expect(json.Unmarshal([]byte(b), &r)).To(Succeed())
	return r.Verdict
}

// failedRules are the rule IDs of the JUnit's failed cases, sorted.
func failedRules(reports string) []string {
	junit := readFile(filepath.Join(reports, "sanity-junit.xml"))
	var out []string
	for _, tc := range regexp.MustCompile(`<testcase [^>]*>`).FindAllString(junit, -1) {
		if regexp.MustCompile(`status="(passed|skipped|pending)"`).MatchString(tc) {
			continue
		}
		if m := regexp.MustCompile(`\[([A-Z][A-Z0-9]*-[0-9]{3})\]`).FindStringSubmatch(tc); m != nil && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// secretIn names where value occurs: in text, or in a file under dir.
func secretIn(value, text, dir string) []string {
	var where []string
	if strings.Contains(text, value) {
		where = append(where, "output")
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.Contains(readFile(p), value) {
			where = append(where, p)
		}
		return nil
	})
	return where
}

func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	return strings.Join(lines, "\n")
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
