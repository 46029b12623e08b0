package engine

import "fmt"

// HumanBytes formats n bytes with binary units for people: 1536 -> "1.50 KiB".
func HumanBytes(n int64) string {
	if n < 0 {
		return "overflow"
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for q := n / unit; q >= unit && exp < 5; q /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
