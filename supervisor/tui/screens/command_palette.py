"""Textual's command palette, closed once.

A burst of keys typed into the palette (a paste, text meant for another pane) can leave a
selection queued behind the `escape` that closed it. Textual's palette would then handle it
after it left the screen stack: its `dismiss` pops whatever screen is on top (the operator's
sessions screen, or the last one: `ScreenStackError`, the dashboard gone) and runs the command.
A palette that is no longer shown takes no selection.
"""

from textual.command import CommandPalette
from textual.message import Message
from textual.widgets import Button, Input, OptionList

_SELECTIONS = (OptionList.OptionSelected, Input.Submitted, Button.Pressed)


class ClosingPalette(CommandPalette):
    """`CommandPalette`, deaf to selections once another screen is on top."""

    async def _on_message(self, message: Message) -> None:
        if isinstance(message, _SELECTIONS) and self.app.screen is not self:
            message.stop()
            return
        await super()._on_message(message)
