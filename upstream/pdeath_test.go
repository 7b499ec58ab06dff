package upstream

// runPoolHelper is replaced in phase 2.
func runPoolHelper() {}
