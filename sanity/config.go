package sanity

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// HostBits is the profile switch for CIDRs with host bits set, such as
// 192.0.2.5/24, which the spec leaves open.
type HostBits string

// The host-bit behaviours a driver may legitimately choose.
const (
	HostBitsNormalise HostBits = "normalise" // accepted and listed as 192.0.2.0/24
	HostBitsReject    HostBits = "reject"    // rejected with INVALID_ARGUMENT
	HostBitsEither    HostBits = "either"    // either of the above
)

// Requirement says whether an optional feature must be present.
type Requirement string

// Requirement values.
const (
	Required Requirement = "required"
	Optional Requirement = "optional"
)

// Profile covers the choices the spec leaves to the driver, so that a driver
// is not failed for a legitimate choice.
type Profile struct {
	// HostBits is how the driver treats CIDRs with host bits set.
	HostBits HostBits `json:"hostBits,omitempty"`
	// IPv6 says whether IPv6 blocks must be supported.
	IPv6 Requirement `json:"ipv6,omitempty"`
	// ListClusterFence says whether ListClusterFence must be implemented.
	// Rules that need it to observe state are skipped when it is optional
	// and the driver answers UNIMPLEMENTED.
	ListClusterFence Requirement `json:"listClusterFence,omitempty"`
}

// Config is what a run of the suite is given. It holds no per-run state.
type Config struct {
	// Endpoint is the driver's address: unix:///path.sock or tcp://host:port.
	Endpoint string `json:"endpoint,omitempty"`
	// ConnectTimeout bounds the wait for the first connection.
	ConnectTimeout Duration `json:"connectTimeout,omitempty"`
	// RPCTimeout is the deadline of every single RPC.
	RPCTimeout Duration `json:"rpcTimeout,omitempty"`
	// Secrets are valid secrets; the suite also sends them missing and wrong.
	Secrets map[string]string `json:"secrets,omitempty"`
	// Parameters are the parameters the driver requires (e.g. clusterID);
	// the suite drops each in turn and expects INVALID_ARGUMENT.
	Parameters map[string]string `json:"parameters,omitempty"`
	// Profile holds the switches for what the spec leaves open.
	Profile Profile `json:"profile,omitempty"`
	// Destructive allows rules that fence wide prefixes outside the
	// documentation ranges. Never set it against a production cluster.
	Destructive bool `json:"destructive,omitempty"`
	// Strict makes SHOULD rules fail the run instead of warning.
	Strict bool `json:"strict,omitempty"`
	// Concurrency is how many requests the concurrency rules send at once.
	Concurrency int `json:"concurrency,omitempty"`
	// Seed drives the randomized rules; 0 picks one, which is printed.
	Seed int64 `json:"seed,omitempty"`
}

// Duration is a time.Duration that reads "30s" style strings from YAML.
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", s, err)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Defaults returns a Config with the documented defaults filled in.
func Defaults() Config {
	return Config{
		ConnectTimeout: Duration{10 * time.Second},
		RPCTimeout:     Duration{30 * time.Second},
		Profile:        Profile{HostBits: HostBitsEither, IPv6: Required, ListClusterFence: Required},
		Concurrency:    8,
	}
}

// LoadFile reads a YAML config file over cfg. Unknown fields and bad values
// are errors that name the file and the field.
func LoadFile(path string, cfg *Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		return fmt.Errorf("config %s: %s", path, cleanYAMLError(err))
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

func cleanYAMLError(err error) string {
	s := err.Error()
	for _, p := range []string{"error unmarshaling JSON: while decoding JSON: ", "error unmarshaling JSON: ", "json: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// Validate checks every field and names the first bad one.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint != "" && !strings.HasPrefix(c.Endpoint, "unix://") && !strings.HasPrefix(c.Endpoint, "tcp://") {
		errs = append(errs, fmt.Errorf("field endpoint: %q must start with unix:// or tcp://", c.Endpoint))
	}
	if c.ConnectTimeout.Duration <= 0 {
		errs = append(errs, errors.New("field connectTimeout: must be positive"))
	}
	if c.RPCTimeout.Duration <= 0 {
		errs = append(errs, errors.New("field rpcTimeout: must be positive"))
	}
	switch c.Profile.HostBits {
	case HostBitsNormalise, HostBitsReject, HostBitsEither:
	default:
		errs = append(errs, fmt.Errorf("field profile.hostBits: %q is not one of normalise, reject, either", c.Profile.HostBits))
	}
	for name, v := range map[string]Requirement{"profile.ipv6": c.Profile.IPv6, "profile.listClusterFence": c.Profile.ListClusterFence} {
		if v != Required && v != Optional {
			errs = append(errs, fmt.Errorf("field %s: %q is not one of required, optional", name, v))
		}
	}
	if c.Concurrency < 2 || c.Concurrency > 64 {
		errs = append(errs, fmt.Errorf("field concurrency: %d is not between 2 and 64", c.Concurrency))
	}
	for k, v := range c.Secrets {
		if k == "" || v == "" {
			errs = append(errs, errors.New("field secrets: keys and values must be non-empty"))
			break
		}
	}
	for k := range c.Parameters {
		if k == "" {
			errs = append(errs, errors.New("field parameters: keys must be non-empty"))
			break
		}
	}
	return errors.Join(errs...)
}
