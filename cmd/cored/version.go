package main

import "runtime/debug"

// version is set at link time (-ldflags "-X main.version=v1.2.3"); without
// it the module version or VCS revision of the build is shown.
var version string

func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
	}
	return v
}
