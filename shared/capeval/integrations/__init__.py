"""Where capeval meets other tools: the Gradio Space builders and leaderboard, the Trainer hook, torchmetrics."""
