//go:build !amd64

package crc32c

const useFold = false

func fold(crc uint32, p []byte) uint32 { panic("crc32c: no folding on this architecture") }
