//go:build linux

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Status is the part of `ceph status -f json` the harness reads.
type Status struct {
	Health struct {
		Status string                     `json:"status"` // HEALTH_OK | HEALTH_WARN | HEALTH_ERR
		Checks map[string]json.RawMessage `json:"checks"`
	} `json:"health"`
	OSDMap struct {
		Epoch     int `json:"epoch"`
		NumOSDs   int `json:"num_osds"`
		NumUpOSDs int `json:"num_up_osds"`
		NumInOSDs int `json:"num_in_osds"`
	} `json:"osdmap"`
	PGMap struct {
		NumPGs     int `json:"num_pgs"`
		PGsByState []struct {
			StateName string `json:"state_name"`
			Count     int    `json:"count"`
		} `json:"pgs_by_state"`
	} `json:"pgmap"`
	// Raw is the whole answer.
	Raw json.RawMessage `json:"-"`
}

// ActiveClean is the number of PGs whose state is exactly active+clean.
func (s *Status) ActiveClean() int {
	n := 0
	for _, p := range s.PGMap.PGsByState {
		if p.StateName == "active+clean" {
			n += p.Count
		}
	}
	return n
}

// Summary is a one-line description.
func (s *Status) Summary() string {
	var pgs []string
	for _, p := range s.PGMap.PGsByState {
		pgs = append(pgs, fmt.Sprintf("%d %s", p.Count, p.StateName))
	}
	checks := make([]string, 0, len(s.Health.Checks))
	for k := range s.Health.Checks {
		checks = append(checks, k)
	}
	return fmt.Sprintf("%s %v; osdmap e%d: %d/%d OSDs up, %d in; %d PGs: %s", s.Health.Status, checks,
		s.OSDMap.Epoch, s.OSDMap.NumUpOSDs, s.OSDMap.NumOSDs, s.OSDMap.NumInOSDs, s.PGMap.NumPGs, strings.Join(pgs, ", "))
}

// Status returns `ceph status`.
func (c *Cluster) Status(ctx context.Context) (*Status, error) {
	out, err := c.Ceph(ctx, "status")
	if err != nil {
		return nil, err
	}
	var s Status
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, fmt.Errorf("ceph status: %v", err)
	}
	s.Raw = out
	return &s, nil
}

// Healthy reports HEALTH_OK with every OSD up and in and every PG
// active+clean (at least the client pool's).
func (s *Status) Healthy(minPGs int) bool {
	return s.Health.Status == "HEALTH_OK" && s.OSDMap.NumOSDs > 0 && s.OSDMap.NumUpOSDs == s.OSDMap.NumOSDs &&
		s.OSDMap.NumInOSDs == s.OSDMap.NumOSDs && s.PGMap.NumPGs >= minPGs && s.ActiveClean() == s.PGMap.NumPGs
}

// WaitHealthy waits for Healthy (it needs the mgr, which reports PG states).
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	var last *Status
	err := poll(ctx, "HEALTH_OK with every PG active+clean", func() (bool, error) {
		s, err := c.Status(ctx)
		if err != nil {
			return false, nil
		}
		last = s
		return s.Healthy(c.st.PGs), nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %s)", err, last.Summary())
	}
	return err
}

// waitOSDsUp waits until n OSDs are up.
func (c *Cluster) waitOSDsUp(ctx context.Context, n int) error {
	return poll(ctx, fmt.Sprintf("%d OSDs up", n), func() (bool, error) {
		s, err := c.Status(ctx)
		return err == nil && s.OSDMap.NumUpOSDs >= n, nil
	})
}
