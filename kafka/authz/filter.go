package authz

// filterOut keeps in *list the elements ok accepts and returns the others,
// in order.
func filterOut[T any](list *[]T, ok func(*T) bool) []T {
	var refused []T
	kept := (*list)[:0]
	for i := range *list {
		e := (*list)[i]
		if ok(&e) {
			kept = append(kept, e)
		} else {
			refused = append(refused, e)
		}
	}
	*list = kept
	return refused
}
