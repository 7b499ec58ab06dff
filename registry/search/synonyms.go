package search

import (
	"sort"
	"sync"
)

// synonymGroups are words that mean the same in tool catalogues ("folder"
// and "directory"). A query word also matches the other words of every group
// it is in, at a discount (rankParams.synonym), so "add issue" still finds
// create_issue but ranks it below a tool literally named add_issue. The
// relation is not transitive: only words that share a group match.
var synonymGroups = [][]string{
	// Actions.
	{"create", "add", "new", "make", "insert"},
	{"generate", "create", "make", "produce"},
	{"delete", "remove", "erase", "destroy", "trash", "discard"},
	{"list", "enumerate", "show", "display"},
	{"get", "fetch", "retrieve", "obtain", "read"},
	{"show", "get"}, // as {"list", "show"}: "show me" asks for one thing or for all
	{"search", "find", "lookup", "seek", "locate"},
	{"update", "edit", "modify", "change", "patch", "alter"},
	{"send", "post", "submit"},
	{"save", "write"},
	{"run", "execute", "exec", "invoke"},
	{"stop", "kill", "terminate", "halt"},
	{"summarize", "summarise", "summary", "tldr"},
	{"analyze", "analyse", "analysis", "analytics"},
	{"compare", "comparison", "versus", "diff"},
	{"buy", "purchase"},
	{"rent", "rental", "lease", "renting"},
	{"calculate", "compute", "calculator"},
	{"login", "signin", "authenticate", "auth", "authentication"},
	{"visualize", "visualise", "visualization", "visualisation"},
	{"recommend", "recommendation", "suggest", "suggestion"},
	{"translate", "translation", "translator"},

	// Things.
	{"image", "picture", "photo", "pic", "img"},
	{"screenshot", "screengrab", "screencap"},
	{"movie", "film"},
	{"music", "song", "songs", "tune"},
	{"folder", "directory", "dir"},
	{"doc", "docs", "documentation"},
	{"repo", "repository"},
	{"issue", "ticket"},
	{"pr", "pull", "merge"},
	{"message", "msg", "dm"},
	{"email", "mail"},
	{"task", "todo"},
	{"note", "memo"},
	{"user", "account", "member"},
	{"company", "business", "organization", "organisation", "org", "firm", "enterprise", "corporation"},
	{"job", "career", "employment", "vacancy"},
	{"resume", "cv"},
	{"money", "currency", "cash"},
	{"price", "cost", "pricing"},
	{"discount", "coupon", "promo", "voucher", "deal"},
	{"news", "headline", "headlines"},
	{"paper", "publication", "article"},
	{"trip", "travel", "journey", "vacation", "holiday"},
	{"hotel", "accommodation", "lodging", "hostel"},
	{"restaurant", "diner", "eatery", "bistro", "cafe"},
	{"recipe", "cooking", "cook"},
	{"house", "home", "apartment", "flat", "housing"},
	{"product", "item", "goods", "merchandise"},
	{"gift", "present"},
	{"location", "place", "address"},
	{"near", "nearby", "local", "around"},
	{"current", "latest", "recent"},
	{"website", "site", "webpage"},
	{"url", "link"},
	{"lawyer", "attorney"},
	{"law", "legal", "statute", "legislation"},
	{"game", "gaming"},
	{"horoscope", "astrology", "zodiac"},
	{"earthquake", "quake", "seismic"},
	{"meme", "memes"},
	{"database", "db"},
	{"spreadsheet", "sheet"},
	{"terminal", "shell", "console", "cli"},
	{"log", "logs", "logging"},
	{"error", "exception"},
	{"password", "passphrase"},
	{"car", "vehicle", "automobile", "auto"},
	{"charity", "nonprofit", "ngo"},
	{"review", "rating"},
	{"timezone", "tz"},
	{"ad", "ads", "advert", "advertisement", "advertising"},
	{"notification", "alert", "notify"},
	{"payment", "pay", "billing"},
	{"cart", "basket"},
	{"sport", "sports"},
	{"football", "soccer"},
	{"podcast", "episode"},
	{"kubernetes", "k8s"},
}

// relatedGroups are words of one topic that a query may use for a tool
// described with another ("forecast" for a weather tool, "stock" for a
// finance tool). They match at a larger discount (rankParams.related).
var relatedGroups = [][]string{
	// Actions.
	{"create", "build", "write", "compose", "draft"},
	{"list", "get", "show", "view", "browse", "read"},
	{"search", "find", "query", "lookup", "discover", "explore", "look"},
	{"update", "set", "rename", "move", "replace"},
	{"edit", "replace", "rewrite", "fix"},
	{"generate", "draw", "paint", "render"},
	{"write", "save", "store"},
	{"send", "share", "deliver", "publish", "post"},
	{"publish", "deploy", "release", "launch", "host"},
	{"run", "start", "launch", "call", "execute"},
	{"stop", "cancel", "close", "end"},
	{"upload", "import"},
	{"download", "export", "save"},
	{"convert", "transform", "translate"},
	{"summarize", "digest", "overview", "takeaway", "gist", "recap"},
	{"analyze", "inspect", "examine", "assess", "evaluate", "insight"},
	{"track", "monitor", "watch", "follow"},
	{"schedule", "plan", "book", "reserve", "reservation", "booking"},
	{"buy", "order", "shop", "shopping", "store"},
	{"product", "shop", "shopping", "buy", "purchase", "retail", "ecommerce", "brand"},
	{"sell", "sale", "sales"},
	{"rent", "tenant", "landlord", "lease"},
	{"learn", "study", "course", "class", "lesson", "tutorial", "education", "teach"},
	{"count", "number", "tally"},
	{"fix", "repair", "resolve", "debug"},
	{"check", "verify", "validate", "test"},
	{"remember", "memory", "store", "recall", "memorize"},
	{"visualize", "chart", "graph", "plot", "diagram"},
	{"recommend", "advice", "idea", "tip"},

	// Things.
	{"image", "graphic", "visual", "illustration", "drawing", "art"},
	{"screenshot", "screen", "capture", "snapshot", "image"},
	{"video", "clip", "footage", "youtube"},
	{"movie", "cinema", "tv", "show", "series", "stream"},
	{"music", "track", "audio", "playlist", "album", "artist", "band"},
	{"audio", "sound", "voice", "speech"},
	{"weather", "forecast", "temperature", "climate", "rain", "snow", "wind"},
	{"file", "document", "pdf"},
	{"repo", "codebase", "project"},
	{"issue", "bug"},
	{"code", "coding", "programming", "source", "snippet", "script", "developer"},
	{"commit", "change", "revision"},
	{"message", "chat", "conversation", "text", "sms"},
	{"email", "gmail", "inbox", "mailbox"},
	{"calendar", "event", "meeting", "appointment", "schedule"},
	{"task", "reminder", "checklist"},
	{"note", "notebook", "journal"},
	{"user", "profile", "person", "people"},
	{"job", "hiring", "hire", "recruit", "recruiting", "interview", "work"},
	{"resume", "job"},
	{"money", "exchange", "forex", "finance"},
	{"finance", "financial", "stock", "market", "invest", "investment", "investing", "trading", "portfolio", "equity", "crypto", "cryptocurrency", "bitcoin", "ethereum", "fund", "bond"},
	{"crypto", "cryptocurrency", "coin", "bitcoin", "btc", "ethereum", "eth", "dogecoin", "doge", "solana", "blockchain", "defi"},
	{"price", "cheap", "fee"},
	{"discount", "sale", "bargain", "saving"},
	{"news", "press", "journalism", "article", "story"},
	{"article", "post", "blog"},
	{"paper", "research", "academic", "scholar", "scholarly", "journal", "arxiv", "science", "scientific", "study", "literature"},
	{"trip", "tour", "tourism", "tourist", "itinerary", "sightseeing"},
	{"hotel", "stay", "resort", "booking"},
	{"flight", "airline", "airport", "plane"},
	{"restaurant", "dining", "dinner", "lunch", "eat", "cuisine", "food"},
	{"recipe", "dish", "meal", "food", "ingredient"},
	{"diet", "nutrition", "calorie", "healthy", "food"},
	{"health", "healthcare", "medical", "medicine", "doctor", "clinic", "clinical", "hospital", "patient", "diagnosis", "disease", "symptom"},
	{"workout", "exercise", "fitness", "gym"},
	{"house", "property", "estate", "realty", "mortgage"},
	{"map", "location", "direction", "directions", "navigation", "route", "geo", "coordinates"},
	{"translate", "language"},
	{"website", "web", "page", "url", "domain"},
	{"browser", "browse", "navigate", "open", "visit", "click", "web", "page", "tab"},
	{"law", "regulation", "court", "lawyer"},
	{"game", "play", "puzzle"},
	{"book", "novel", "ebook", "library", "reading", "author"},
	{"horoscope", "tarot"},
	{"space", "nasa", "astronomy", "planet", "galaxy", "satellite", "astronaut"},
	{"meme", "funny", "humor", "joke"},
	{"database", "sql", "table", "query", "record"},
	{"spreadsheet", "excel", "csv"},
	{"terminal", "command", "bash"},
	{"log", "trace"},
	{"error", "failure", "crash", "bug"},
	{"container", "docker"},
	{"cluster", "kubernetes", "pod"},
	{"storage", "bucket", "blob"},
	{"secret", "password", "credential", "token", "key"},
	{"permission", "access", "role", "grant"},
	{"flashcard", "quiz", "memorize"},
	{"seo", "keyword", "ranking", "backlink", "serp"},
	{"charity", "donation", "donate"},
	{"review", "feedback", "opinion"},
	{"time", "clock", "timezone", "date"},
	{"social", "twitter", "tweet", "facebook", "instagram", "linkedin"},
	{"marketing", "advertising", "campaign", "promotion"},
	{"design", "template", "layout", "graphic"},
	{"write", "writing", "rewrite", "paraphrase", "rephrase", "copywriting", "essay"},
	{"grammar", "proofread", "spelling", "polish"},
	{"question", "answer", "ask", "faq"},
	{"payment", "invoice", "checkout"},
	{"sport", "football", "soccer", "basketball", "baseball", "hockey", "score", "league", "match"},
	{"qr", "barcode"},
	{"near", "place", "location"},
	{"current", "now", "today", "live", "realtime"},
	{"travel", "flight", "hotel", "transport", "transportation", "booking"},
	{"transport", "transportation", "car", "taxi", "bus", "train", "subway", "ferry"},
	{"crypto", "nft", "nfts", "wallet"},
	{"currency", "money", "exchange", "dollar", "euro", "yen", "rupee", "peso", "yuan",
		"usd", "eur", "gbp", "jpy", "cny", "inr", "aud", "cad", "chf"},
	{"weather", "sunny", "cloudy", "fog", "foggy", "storm", "humidity", "umbrella"},
	{"house", "condo", "villa", "residential", "bedroom", "neighborhood", "neighbourhood"},
	{"seo", "traffic", "visibility", "organic"},
	{"company", "revenue", "earnings", "income", "profit", "shareholder", "ceo", "director", "officer"},
	{"stock", "etf", "share", "shares", "nasdaq", "dividend", "earnings", "ipo"},
	{"gold", "silver", "platinum", "palladium", "bullion", "precious", "metal", "metals", "commodity", "commodities"},
	{"news", "politics", "political", "election", "president", "headline"},
	{"learn", "course", "curriculum", "tutor", "lecture", "teacher", "syllabus"},
	{"price", "affordable", "budget", "expensive", "inexpensive", "cheapest"},
	{"trip", "attraction", "landmark", "destination", "getaway"},
	{"security", "vulnerability", "scanner", "exploit", "malware", "pentest", "phishing"},
	{"loan", "credit", "lending", "lender", "borrow"},
	{"apparel", "clothing", "clothes", "shirt", "tshirt", "hoodie", "merch"},
	{"health", "mental", "wellbeing", "therapy", "anxiety", "stress", "mindfulness", "meditation"},
	{"recipe", "vegan", "vegetarian", "dessert", "cake", "baking", "delicious", "dinner"},
	{"language", "pronounce", "pronunciation", "vocabulary", "fluent", "fluency"},
	{"monetize", "referral", "affiliate", "commission"},
	{"animal", "pet", "dog", "cat", "livestock", "horse"},
	{"workout", "abs", "muscle", "cardio", "yoga", "strength"},
	{"law", "legal", "liable", "liability", "lawsuit", "jury", "penalty", "attorney", "contract"},
	{"job", "salary", "talent", "vacancy", "employer", "workplace"},
	{"product", "laptop", "phone", "smartphone", "headphone", "headphones", "camera", "tv", "television",
		"blender", "vacuum", "router", "smartwatch", "appliance", "gadget", "furniture", "shoe", "shoes",
		"dress", "clothes", "clothing", "jacket", "cosmetics", "makeup", "skincare", "toy", "jewelry"},
}

// vocabulary is what the ranking knows of words beyond a catalogue, built
// from the tables above on first use (an index built, a query ranked)
// rather than when the program starts: a daemon whose clients never search
// does not hold it.
type vocabulary struct {
	// synonymsOf and relatedTo map a stem to the stems it matches.
	synonymsOf, relatedTo map[string][]string
	// lexicon are the stems of the words the ranking knows, long enough
	// to look for misspelt, sorted.
	lexicon []string
}

// vocab returns the vocabulary, built once.
var vocab = sync.OnceValue(func() *vocabulary {
	v := &vocabulary{synonymsOf: buildSynonyms(synonymGroups), relatedTo: buildSynonyms(relatedGroups)}
	v.lexicon = buildLexicon(v.synonymsOf, v.relatedTo)
	return v
})

func buildSynonyms(groups [][]string) map[string][]string {
	sets := make(map[string]map[string]struct{})
	for _, g := range groups {
		stems := make([]string, 0, len(g))
		for _, w := range g {
			splitWords(w, func(w string) { stems = append(stems, stem(w)) })
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
