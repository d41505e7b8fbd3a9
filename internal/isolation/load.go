package isolation

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// Parse reads an application spec from YAML or JSON. Unknown fields are an
// error, so a misspelt selector cannot silently drop a restriction.
func Parse(data []byte) (Application, error) {
	var app Application
	if err := yaml.UnmarshalStrict(data, &app); err != nil {
		return Application{}, fmt.Errorf("application spec: %w", err)
	}
	return app, nil
}
