package topicadmin

// maxTopicName is Kafka's limit (249: room for a partition suffix in a
// 255-byte file name).
const maxTopicName = 249

// ValidName reports whether name is a legal Kafka topic name:
// 1–249 characters of [a-zA-Z0-9._-], not "." or "..".
func ValidName(name string) bool {
	if name == "" || len(name) > maxTopicName || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
