package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A flag's usage text in backquotes names the flag's argument in --help
// (pflag.UnquoteUsage): "`termkeep token ls`" made --name read as
// "--name termkeep token ls". Backquotes may name a flag's argument, one
// word, and nothing else; a flag without an argument has none.
func TestFlagUsageNamesNoArgument(t *testing.T) {
	word := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if !strings.Contains(f.Usage, "`") {
				return
			}
			name, rest := pflag.UnquoteUsage(f)
			switch {
			case f.NoOptDefVal != "":
				t.Errorf("%s --%s takes no argument, but backquotes in its text %q name one", c.CommandPath(), f.Name, f.Usage)
			case !word.MatchString(name):
				t.Errorf("%s --%s: backquotes in %q make its argument %q in --help; quote with ' or name one word", c.CommandPath(), f.Name, f.Usage, name)
			case strings.Contains(rest, "`"):
				t.Errorf("%s --%s: more backquotes in %q than the argument's name", c.CommandPath(), f.Name, f.Usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(nil))
}
