package upstream

// runPoolHelper runs a Pool in a helper process for the parent-death test.
func runPoolHelper() {}
