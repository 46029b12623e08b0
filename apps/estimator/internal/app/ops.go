package app

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"carve.dev/libs/kernels"
)

func opsCommand(s Streams) *cli.Command {
	return &cli.Command{
		Name:      "ops",
		Usage:     "list the ops a backend has kernels for, and their tactics",
		UsageText: "estimator ops [--target cpu|sim|h200|...] [--format table|json]",
		Flags: []cli.Flag{
			targetFlag(),
			&cli.IntFlag{Name: "workers", Hidden: true},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: table or json"},
		},
		Action: func(c *cli.Context) error { return runOps(c, s) },
	}
}

// opsList is the JSON form of ops; README.md documents it.
type opsList struct {
	Backend string  `json:"backend"`
	Ops     []opRow `json:"ops"`
}

type opRow struct {
	Op      string      `json:"op"`
	Domain  string      `json:"domain"`
	Tactics []tacticRow `json:"tactics"`
}

type tacticRow struct {
	Name      string `json:"name"`
	Workspace bool   `json:"workspace"`
	Summary   string `json:"summary"`
}

func runOps(c *cli.Context, s Streams) error {
	if err := noArgs(c); err != nil {
		return err
	}
	form, err := format(c)
	if err != nil {
		return err
	}
	t, err := target(c)
	if err != nil {
		return err
	}
	backend := t.Backend
	reg, err := kernels.RegistryFor(backend)
	if err != nil {
		return err
	}
	list := opsList{Backend: backend, Ops: []opRow{}}
	for _, o := range reg.Ops(backend) {
		row := opRow{Op: o.Op.Op, Domain: domainLabel(o.Op.Domain), Tactics: []tacticRow{}}
		for _, t := range o.Tactics {
			row.Tactics = append(row.Tactics, tacticRow{Name: t.Name, Workspace: t.Workspace, Summary: t.Summary})
		}
		list.Ops = append(list.Ops, row)
	}
	if form == "json" {
		return writeJSON(s.Stdout, list)
	}
	tw := newTable(s.Stdout)
	tw.row("OP\tTACTIC\tWORKSPACE\tSUMMARY\n")
	for _, o := range list.Ops {
		name := opLabel(o.Domain, o.Op)
		if len(o.Tactics) == 0 {
			tw.row("%s\t-\t\t\n", name)
		}
		for i, t := range o.Tactics {
			if i > 0 {
				name = ""
			}
			ws := "no"
			if t.Workspace {
				ws = "yes"
			}
			tw.row("%s\t%s\t%s\t%s\n", name, t.Name, ws, strings.TrimSpace(t.Summary))
		}
	}
	if err := tw.flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.Stdout, "\n%d ops on backend %s\n", len(list.Ops), backend)
	return err
}
