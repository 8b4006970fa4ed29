/** Group commands (`orgplane auth`, `orgplane orgs`, ...): without a subcommand they print their help, like `gh`. */
import { Command, ValidationError } from "@effect/cli"
import { Effect } from "effect"

export const group = <
  const Name extends string,
  const Subcommands extends readonly [Command.Command<any, any, any, any>, ...Array<Command.Command<any, any, any, any>>]
>(name: Name, description: string, subcommands: Subcommands) => {
  let self: Command.Command<any, any, any, any> | undefined
  const command = Command.make(name, {}, () =>
    Effect.suspend(() => Effect.fail(ValidationError.helpRequested(self!.descriptor)))).pipe(
      Command.withDescription(description),
      Command.withSubcommands(subcommands)
    )
  self = command
  return command
}
