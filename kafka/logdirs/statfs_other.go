//go:build !linux && !darwin

package logdirs

import "os"

// Stat reports unknown usage (-1) where there is no statfs; an error only
// when dir is gone.
func Stat(dir string) (Usage, error) {
	_, err := os.Stat(dir)
	return Usage{Total: -1, Usable: -1}, err
}
