package sanity_test

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fenceproof/fenceproof/rulebook/clitest"
)

// testDriver builds one of the test drivers of testdata/ once per test
// binary, beside the fenceproof binary (removed with it), and returns its
// path.
func testDriver(t *testing.T, name string) string {
	t.Helper()
	builds.Lock()
	b, ok := builds.m[name]
	if !ok {
		b = &build{}
		builds.m[name] = b
	}
	builds.Unlock()
	b.once.Do(func() {
		b.path = filepath.Join(filepath.Dir(clitest.Bin), name)
		if out, err := exec.Command("go", "build", "-o", b.path, "./testdata/"+name).CombinedOutput(); err != nil {
			b.err = &buildError{name: name, out: string(out), err: err}
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

type build struct {
	once sync.Once
	path string
	err  error
}

var builds = struct {
	sync.Mutex
	m map[string]*build
}{m: map[string]*build{}}

type buildError struct {
	name, out string
	err       error
}

func (e *buildError) Error() string {
	return "building " + e.name + ": " + e.err.Error() + "\n" + e.out
}
