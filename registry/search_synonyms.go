package registry

import "sort"

// synonymGroups are words that name the same action or thing in tool
// catalogues. A query word also matches the other words of every group it is
// in, at a discount (rankParams.synonym), so "add issue" still finds
// create_issue but ranks it below a tool literally named add_issue. The
// relation is not transitive: only words that share a group are related.
var synonymGroups = [][]string{
	// Actions.
	{"create", "add", "new", "make", "insert", "build"},
	{"generate", "create", "make", "produce"},
	{"write", "create", "compose", "draft"},
	{"delete", "remove", "erase", "destroy", "trash", "discard", "drop"},
	{"list", "show", "display", "enumerate", "view"},
	{"get", "fetch", "retrieve", "read", "obtain", "load", "show", "view"},
	{"search", "find", "query", "lookup", "look", "seek", "discover", "locate", "explore"},
	{"update", "edit", "modify", "change", "patch", "alter", "set"},
	{"rename", "move"},
	{"send", "post", "share", "submit", "deliver"},
	{"publish", "deploy", "release", "launch", "host"},
	{"run", "execute", "exec", "invoke", "call", "launch", "start"},
	{"stop", "kill", "terminate", "halt", "cancel"},
	{"upload", "import"},
	{"download", "export", "save"},
	{"convert", "transform", "translate", "change"},
	{"summarize", "summary", "summarise", "digest", "overview", "tldr"},
	{"analyze", "analyse", "analysis", "analytics", "inspect", "examine", "assess", "evaluate"},
	{"compare", "comparison", "versus", "diff", "difference"},
	{"track", "monitor", "watch", "follow"},
	{"schedule", "plan", "book", "reserve", "reservation", "booking"},
	{"buy", "purchase", "order", "shop", "shopping"},
	{"sell", "sale", "sales"},
	{"rent", "rental", "lease", "renting", "tenant", "landlord"},
	{"learn", "study", "course", "class", "lesson", "tutorial", "education", "teach", "training"},
	{"calculate", "compute", "calculator", "math", "estimate"},
	{"count", "number", "tally"},
	{"login", "signin", "authenticate", "auth", "authentication"},
	{"fix", "repair", "resolve", "debug"},
	{"check", "verify", "validate", "test"},
	{"remember", "memory", "store", "recall", "memorize"},
	{"visualize", "visualization", "chart", "graph", "plot", "diagram"},
	{"recommend", "recommendation", "suggest", "suggestion", "advice", "idea"},

	// Things.
	{"image", "picture", "photo", "pic", "img", "graphic", "visual", "illustration"},
	{"screenshot", "screen", "capture", "snapshot"},
	{"video", "clip", "footage", "youtube"},
	{"movie", "film", "cinema", "show", "tv"},
	{"music", "song", "track", "audio", "playlist", "album", "artist"},
	{"sound", "audio", "voice", "speech"},
	{"weather", "forecast", "temperature", "climate", "rain", "meteorology"},
	{"file", "document", "doc", "pdf"},
	{"folder", "directory", "dir"},
	{"repo", "repository", "codebase", "project"},
	{"issue", "ticket", "bug"},
	{"pr", "pull", "merge"},
	{"code", "coding", "programming", "source", "snippet", "script", "developer"},
	{"commit", "change", "revision"},
	{"branch", "ref"},
	{"message", "chat", "dm", "conversation", "text", "sms"},
	{"email", "mail", "gmail", "inbox", "mailbox"},
	{"calendar", "event", "meeting", "appointment", "schedule"},
	{"task", "todo", "reminder", "checklist"},
	{"note", "memo", "notebook", "journal"},
	{"user", "account", "member", "profile", "person", "people"},
	{"company", "business", "organization", "organisation", "org", "firm", "enterprise", "corporation"},
	{"job", "career", "employment", "hiring", "hire", "vacancy", "recruit", "recruiting"},
	{"resume", "cv"},
	{"money", "currency", "cash", "exchange", "forex"},
	{"finance", "financial", "stock", "market", "invest", "investment", "investing", "trading", "portfolio", "equity", "crypto", "cryptocurrency"},
	{"price", "cost", "pricing", "fee", "cheap"},
	{"deal", "discount", "coupon", "promo", "sale", "voucher", "bargain"},
	{"news", "headline", "headlines", "press", "journalism"},
	{"article", "post", "blog", "story"},
	{"paper", "research", "academic", "scholar", "scholarly", "publication", "journal", "arxiv", "science", "scientific", "study"},
	{"trip", "travel", "journey", "vacation", "holiday", "tour", "tourism", "tourist", "itinerary"},
	{"hotel", "accommodation", "lodging", "stay", "hostel", "resort"},
	{"flight", "airline", "airport", "plane"},
	{"restaurant", "dining", "dinner", "lunch", "eat", "cuisine"},
	{"recipe", "cook", "cooking", "dish", "meal", "food", "ingredient"},
	{"diet", "nutrition", "calorie", "fitness", "healthy"},
	{"health", "medical", "medicine", "doctor", "clinic", "disease", "symptom"},
	{"workout", "exercise", "fitness", "gym", "training"},
	{"house", "home", "property", "apartment", "housing", "estate", "realty", "flat"},
	{"product", "item", "goods", "merchandise"},
	{"gift", "present"},
	{"map", "location", "place", "address", "direction", "directions", "navigation", "route", "geo", "coordinates", "nearby"},
	{"translate", "translation", "language", "translator"},
	{"website", "site", "webpage", "web", "page", "url", "link", "domain"},
	{"browser", "browse", "navigate", "click", "web", "page"},
	{"law", "legal", "statute", "regulation", "attorney", "lawyer", "court"},
	{"game", "play", "gaming", "puzzle"},
	{"podcast", "episode"},
	{"book", "novel", "ebook", "library", "reading", "author"},
	{"astrology", "horoscope", "zodiac", "tarot"},
	{"earthquake", "seismic", "quake", "tremor"},
	{"space", "nasa", "astronomy", "planet", "galaxy", "satellite", "astronaut"},
	{"meme", "funny", "humor", "joke"},
	{"database", "db", "sql", "table"},
	{"spreadsheet", "sheet", "excel", "csv"},
	{"terminal", "shell", "command", "bash", "cli", "console"},
	{"log", "logs", "logging", "trace"},
	{"error", "exception", "failure", "crash", "bug"},
	{"container", "docker"},
	{"cluster", "kubernetes", "k8s", "pod"},
	{"storage", "bucket", "s3", "blob"},
	{"secret", "password", "credential", "token", "key"},
	{"permission", "access", "role", "grant"},
	{"flashcard", "quiz", "memorize", "review"},
	{"car", "vehicle", "auto", "automobile"},
	{"seo", "keyword", "ranking", "backlink", "serp"},
	{"charity", "nonprofit", "donation", "donate", "ngo"},
	{"review", "rating", "feedback", "opinion"},
	{"time", "clock", "timezone", "date"},
	{"social", "twitter", "tweet", "facebook", "instagram", "linkedin"},
	{"marketing", "advertising", "ad", "ads", "campaign", "promotion"},
	{"design", "template", "layout", "graphic"},
	{"write", "writing", "rewrite", "paraphrase", "rephrase", "copywriting", "essay"},
	{"grammar", "proofread", "spelling", "polish"},
	{"question", "answer", "ask", "faq"},
	{"notification", "alert", "notify"},
	{"payment", "pay", "invoice", "billing", "checkout"},
	{"cart", "basket", "checkout"},
	{"sport", "sports", "football", "soccer", "basketball", "baseball", "hockey", "score", "league"},
	{"qr", "barcode"},
}

// synonymsOf maps a stem to the stems it is related to, built once from
// synonymGroups.
var synonymsOf = buildSynonyms(synonymGroups)

func buildSynonyms(groups [][]string) map[string][]string {
	sets := make(map[string]map[string]struct{})
	for _, g := range groups {
		stems := make([]string, 0, len(g))
		for _, w := range g {
			stems = append(stems, stem(w))
		}
		for _, a := range stems {
			for _, b := range stems {
				if a == b {
					continue
				}
				if sets[a] == nil {
					sets[a] = make(map[string]struct{})
				}
				sets[a][b] = struct{}{}
			}
		}
	}
	out := make(map[string][]string, len(sets))
	for a, set := range sets {
		list := make([]string, 0, len(set))
		for b := range set {
			list = append(list, b)
		}
		sort.Strings(list)
		out[a] = list
	}
	return out
}
