"""The Gradio app: one battle view shared by Live and Replays, plus Compare."""
