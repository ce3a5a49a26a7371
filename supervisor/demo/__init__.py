"""The scripted demo agent (`python -m supervisor.demo.agent`)."""
