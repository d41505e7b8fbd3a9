package sim

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestShardMergeEqualsOneProcess: three shards merged give exactly the
// findings (seeds, verdicts, minimized scenarios and traces) of one
// process over the same runs.
func TestShardMergeEqualsOneProcess(t *testing.T) {
	seed := testSeed(t)
	const runs = 60
	pol := Policies["seed"]
	whole, err := Explore(pol, runs, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) == 0 {
		t.Fatalf("seed %d: no findings to compare; pick another seed", seed)
	}
	files := map[string][]byte{}
	for i := 0; i < 3; i++ {
		fs, err := ExploreShard(pol, runs, seed, Shard{Index: i, Of: 3}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := MarshalShard(&ShardReport{Policy: pol.Name, Seed: seed, Runs: runs, Shard: i, Shards: 3, Findings: Report(fs)})
		if err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("shard-%d.json", i)] = b
	}
	m, err := Merge(files)
	if err != nil {
		t.Fatal(err)
	}
	if want := Report(whole); !reflect.DeepEqual(m.Findings, want) {
		t.Errorf("seed %d: merged shards differ from one process: %d vs %d findings", seed, len(m.Findings), len(want))
	}
}

// TestMergeRejects: a missing, duplicated or foreign shard is an error.
func TestMergeRejects(t *testing.T) {
	mk := func(i, n int, pol string) []byte {
		b, _ := MarshalShard(&ShardReport{Policy: pol, Seed: 1, Runs: 9, Shard: i, Shards: n})
		return b
	}
	cases := []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"missing", map[string][]byte{"a": mk(0, 3, "seed"), "b": mk(1, 3, "seed")}, "shard 2/3 is missing"},
		{"duplicate", map[string][]byte{"a": mk(0, 2, "seed"), "b": mk(0, 2, "seed")}, "already given"},
		{"foreign", map[string][]byte{"a": mk(0, 2, "seed"), "b": mk(1, 2, "safe")}, "another exploration"},
		{"garbage", map[string][]byte{"a": []byte("{")}, "a: unexpected end"},
		{"none", map[string][]byte{}, "no shard reports"},
	}
	for _, c := range cases {
		if _, err := Merge(c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0", "1/2x"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q): no error", bad)
		}
	}
	if sh, err := ParseShard("2/3"); err != nil || sh != (Shard{2, 3}) {
		t.Errorf("ParseShard(2/3) = %v, %v", sh, err)
	}
}

// TestCompareHTML: the comparison page has real tables, links every
// violating scripted run's trace, and no raw Markdown.
func TestCompareHTML(t *testing.T) {
	scs := loadAll(t)
	cmp, err := Compare(scs, 3, testSeed(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := cmp.HTML()
	if strings.Contains(h, "<pre>") || strings.Contains(h, "|---|") {
		t.Error("sim-compare.html still shows preformatted Markdown")
	}
	if strings.Count(h, "<table>") < 3 {
		t.Errorf("want at least 3 tables, got %d", strings.Count(h, "<table>"))
	}
	for key := range cmp.Traces {
		if !strings.Contains(h, `href="sim-compare-traces/`+key+`.txt"`) {
			t.Errorf("no link to the trace of %s", key)
		}
	}
	if len(cmp.Traces) == 0 {
		t.Error("no violating scripted run: the link check checked nothing")
	}
}
